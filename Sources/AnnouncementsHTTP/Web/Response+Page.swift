import AnnouncementsWeb
import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A web page: HTML, compressed when the client takes it, under the pages' policy
    /// (`SecurityHeaders.pagePolicy`). A page depends on who is signed in: no shared cache keeps it,
    /// and one shown to a signed-in reader is kept by no cache at all (an auditor's history, after
    /// sign-out, must not come back with the Back button on a shared machine: browsers also drop
    /// such a page from their back-forward cache once the session cookie changes). No other site's
    /// window keeps a handle on a page (`Cross-Origin-Opener-Policy: same-origin`): one that opened
    /// it, or that a link in a body opened, learns nothing of it (not even its count of frames,
    /// which differs between readers). A 401 tells the access log why (`Challenge.pageError`):
    /// `authError` where the caller knows (a sign-in form's token), else
    /// no session (`no_token`) or one whose token is not configured, or no longer (`invalid_token`).
    static func page(_ html: String, _ request: Request, status: HTTPResponse.Status = .ok, authError: String? = nil) -> Response {
        let body = CodedBody(ByteBuffer(string: html), compressedWith: ContentCoding.preferred(by: request))
        var response = Response.coded(body, contentType: "text/html; charset=utf-8", status: status)
        response.headers[.contentSecurityPolicy] = SecurityHeaders.pagePolicy
        response.headers[.cacheControl] = WebSession.token(in: request) == nil ? "private, no-cache" : "no-store"
        response.headers[.vary] = "Cookie, Accept-Encoding"
        response.headers[.crossOriginOpenerPolicy] = "same-origin"
        response.headers[.referrerPolicy] = "same-origin"
        if status == .unauthorized {
            response.headers[Challenge.pageError] = authError ?? (WebSession.token(in: request) == nil ? "no_token" : "invalid_token")
        }
        return response
    }

    /// `303 See Other` to `location` (a path on this site): where a form's post sends the browser.
    static func seeOther(_ location: String, setCookie: String? = nil) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
        if let setCookie { response.headers[.setCookie] = setCookie }
        return response
    }


    /// An asset, kept for good by any cache (its path names its bytes).
    static func asset(_ asset: WebAsset, _ request: Request) -> Response {
        let body = CodedBody(ByteBuffer(bytes: asset.bytes), compressedWith: ContentCoding.preferred(by: request))
        var response = Response.coded(body, contentType: asset.contentType)
        response.headers[.cacheControl] = "public, max-age=31536000, immutable"
        response.headers[.vary] = "Accept-Encoding"
        return response
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
    static let crossOriginOpenerPolicy = Self("Cross-Origin-Opener-Policy")!
}
