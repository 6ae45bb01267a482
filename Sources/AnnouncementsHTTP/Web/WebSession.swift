import AnnouncementsDomain
import AnnouncementsWeb
import Foundation
import HTTPTypes
import Hummingbird

/// The web client's sign-in: the token in a cookie that no page script can read (`HttpOnly`), that
/// no other site's page sends with its requests (`SameSite=Lax`: a link followed from another site,
/// a mail or a chat, still opens the page signed in; no page's GET changes anything, and every form
/// post must come from this site's pages, `requireSameOrigin`), and that goes only over TLS where
/// the request came over it (`Secure`, and then named `__Host-…`). The token is never in a URL,
/// and neither cookies nor bodies are logged.
enum WebSession {
    static let cookieName = "announcements_session"
    /// The name over TLS: a `__Host-` cookie is one no sibling subdomain can set for this host.
    static let secureCookieName = "__Host-" + cookieName

    /// The token the request's session cookie holds (the `__Host-` one first), or nil.
    static func token(in request: Request) -> String? {
        // Most requests (every API client's) send no cookie: nothing to parse. (Every read asks.)
        guard request.headers[.cookie] != nil else { return nil }
        let cookies = request.cookies
        guard let value = (cookies[secureCookieName] ?? cookies[cookieName])?.value, !value.isEmpty else { return nil }
        return value.removingPercentEncoding
    }

    /// `Set-Cookie` that signs `token` in, for the rest of the browser's session.
    static func signIn(_ token: String, _ request: Request) -> String {
        isSecure(request)
            ? "\(secureCookieName)=\(QueryText.encoded(token)); Path=/; HttpOnly; SameSite=Lax; Secure"
            : "\(cookieName)=\(QueryText.encoded(token)); Path=/; HttpOnly; SameSite=Lax"
    }

    /// `Set-Cookie` that signs out: the cookie, expired.
    static func signOut(_ request: Request) -> String {
        isSecure(request)
            ? "\(secureCookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure"
            : "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
    }

    /// Whether the request came over TLS: a proxy in front says so (`X-Forwarded-Proto: https`,
    /// or `Forwarded: proto=https`); this server itself speaks plain HTTP.
    private static func isSecure(_ request: Request) -> Bool {
        let forwardedProto = request.headers[.xForwardedProto]?.lowercased()
        let forwarded = request.headers[.forwarded]?.lowercased() ?? ""
        return forwardedProto == "https" || forwarded.contains("proto=https")
    }

    /// Refuses (403) an unsafe request that another site's page may have sent: a form post that
    /// acts with the session cookie must come from this site's own pages. A browser that knows
    /// says so in `Sec-Fetch-Site`, which no page can set: `same-origin` is all it takes (behind a
    /// proxy that rewrites `Host`, `Origin` would not match it). A browser that does not send it
    /// sends `Origin` with every POST, compared with `Host`. SameSite=Lax keeps the cookie from
    /// other sites' posts as well, but not in every browser, and not from a sibling subdomain.
    /// This site's origins as the request names it (its `Host`), over HTTP and HTTPS: what a
    /// browser's `Origin` and `Referer` say of a page of this site.
    static func ownOrigins(_ request: Request) -> [String] {
        request.head.authority.map { ["http://\($0)", "https://\($0)"] } ?? []
    }

    static func requireSameOrigin(_ request: Request) throws(APIError) {
        if let site = request.headers[.secFetchSite] {
            guard site == "same-origin" else {
                throw APIError(.forbidden, "refused: this form was sent from another site (Sec-Fetch-Site: \(site)); use this site's own pages")
            }
            return
        }
        guard let origin = request.headers[.origin] else {
            throw APIError(.forbidden, "refused: a form that acts for a signed-in user must come from this site's own pages, and this request says no Origin")
        }
        guard ownOrigins(request).contains(origin) else {
            throw APIError(.forbidden, "refused: this form was sent from another site (Origin: \(VisibleText.escaped(origin))); use this site's own pages")
        }
    }
}

extension HTTPField.Name {
    static let xForwardedProto = Self("X-Forwarded-Proto")!
    static let forwarded = Self("Forwarded")!
    static let secFetchSite = Self("Sec-Fetch-Site")!
}
