import HTTPTypes

/// The `WWW-Authenticate` of a refusal, as RFC 6750 (section 3) has them: `Bearer` alone where the
/// request sent no bearer token, with an `error` code where it sent one that is malformed, not
/// configured, or of a role without the permission, so that a client can tell "sign in" from
/// "this token will not do".
enum Challenge {
    static let bearer: HTTPFields = [.wwwAuthenticate: "Bearer"]
    static let invalidRequest: HTTPFields = [.wwwAuthenticate: #"Bearer error="invalid_request""#]
    static let invalidToken: HTTPFields = [.wwwAuthenticate: #"Bearer error="invalid_token""#]
    static let insufficientScope: HTTPFields = [.wwwAuthenticate: #"Bearer error="insufficient_scope""#]

    /// Where a web page's refusal, which sends no challenge (its reader signs in with a form and a
    /// cookie, not a bearer token), gives the access log its code (`no_token`, `invalid_token`):
    /// taken off the response before it leaves (`RequestLogMiddleware`), never sent.
    static let pageError = HTTPField.Name("Announcements-Auth-Error")!

    /// The `error` code of a response's challenge (`invalid_token`); for one without, `no_token`
    /// when the request sent no `Authorization` and `other_scheme` when it sent another scheme's
    /// (`Basic …`); nil without a challenge: what the access log says of a refusal.
    static func error(of response: HTTPFields, request: HTTPFields) -> String? {
        guard let challenge = response[.wwwAuthenticate] else { return nil }
        guard let start = challenge.firstRange(of: #"error=""#)?.upperBound, let end = challenge[start...].firstIndex(of: "\"") else {
            return request.contains(.authorization) ? "other_scheme" : "no_token"
        }
        return String(challenge[start..<end])
    }
}
