import HTTPTypes
import Hummingbird

/// The headers every answer carries, whoever makes it (a route, the error middleware, the
/// connection's own refusals): `X-Content-Type-Options: nosniff`, so that no browser reads an
/// answer as another type than it says (a 400 quotes the request's text inside its JSON), and,
/// on API answers, `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`: if a
/// browser ever renders one, it loads nothing and runs nothing, and no page may frame it. (The
/// web client's pages bring their own, `pagePolicy`.)
enum SecurityHeaders {
    static let contentTypeOptions = "nosniff"
    static let apiPolicy = "default-src 'none'; frame-ancestors 'none'"
    /// The web client's pages: their own script, stylesheet, images, event feed and forms, and
    /// nothing else; no inline script, no eval, no `<base>`, never framed. An announcement's frame
    /// (`srcdoc`) inherits it, so a body loads nothing from elsewhere either.
    static let pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// The headers as raw `Name: value` lines, for answers written below the router.
    static let lines = "X-Content-Type-Options: \(contentTypeOptions)\r\nContent-Security-Policy: \(apiPolicy)\r\n"

    /// The headers as (name, value) pairs, for NIO's `HTTPHeaders`.
    static let pairs = [("X-Content-Type-Options", contentTypeOptions), ("Content-Security-Policy", apiPolicy)]
}

/// Adds `SecurityHeaders` to every answer the router gives: the policy where the answer has none
/// of its own (a page would bring its own).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = SecurityHeaders.contentTypeOptions
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = SecurityHeaders.apiPolicy
        }
        return response
    }
}
