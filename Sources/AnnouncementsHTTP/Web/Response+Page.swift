import AnnouncementsWeb
import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A web page: HTML, compressed when the client takes it, under the pages' policy
    /// (`SecurityHeaders.pagePolicy`). A page depends on who is signed in: no shared cache keeps it,
    /// and one shown to a signed-in reader is kept by no cache at all (an auditor's history, after
    /// sign-out, must not come back with the Back button on a shared machine).
    static func page(_ html: String, _ request: Request, status: HTTPResponse.Status = .ok) -> Response {
        let body = CodedBody(ByteBuffer(string: html), compressedWith: ContentCoding.preferred(by: request))
        var response = Response.coded(body, contentType: "text/html; charset=utf-8", status: status)
        response.headers[.contentSecurityPolicy] = SecurityHeaders.pagePolicy
        response.headers[.cacheControl] = WebSession.token(in: request) == nil ? "private, no-cache" : "no-store"
        response.headers[.vary] = "Cookie, Accept-Encoding"
        response.headers[.referrerPolicy] = "same-origin"
        return response
    }

    /// `303 See Other` to `location` (a path on this site): where a form's post sends the browser.
    static func seeOther(_ location: String, setCookie: String? = nil) -> Response {
        var response = Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
        if let setCookie { response.headers[.setCookie] = setCookie }
        return response
    }

    /// The answer to signing out: the cookie expired, and the browser told to drop what it kept
    /// of this site (`Clear-Site-Data: "cache"`: pages it may still hold from before, and its
    /// back-forward cache).
    static func signedOut(_ request: Request) -> Response {
        var response = seeOther("/", setCookie: WebSession.signOut(request))
        response.headers[.clearSiteData] = "\"cache\""
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
    static let clearSiteData = Self("Clear-Site-Data")!
}
