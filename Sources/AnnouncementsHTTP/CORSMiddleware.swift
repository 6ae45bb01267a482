import HTTPTypes
import Hummingbird

/// Which web pages may call the API from a browser (`http.cors_origins`).
public struct CORSPolicy: Sendable, Hashable {
    /// Origins allowed everything a token allows them (`scheme://host[:port]`).
    public var origins: Set<String>
    /// Whether any page may read (`*`): GET and HEAD only, and never with credentials.
    public var anyOriginReads: Bool

    /// `origins` as configured: `*` lets any page read; the others are exact origins.
    public init(origins: [String] = []) {
        self.origins = Set(origins.filter { $0 != "*" })
        anyOriginReads = origins.contains("*")
    }

    var isEnabled: Bool { anyOriginReads || !origins.isEmpty }

    /// Request headers a page may send: the API's own, and `Authorization` for listed origins.
    static let allowedHeaders = "Accept, Accept-Version, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID, Min-Seq, X-Request-ID"
    /// Response headers a page may read.
    static let exposedHeaders = "API-Version, ETag, Idempotency-Key, Link, Location, Log-Seq, Retry-After, WWW-Authenticate, X-Request-ID, X-Total-Count"

    /// The `Access-Control-Allow-Origin` for a request from `origin` with `method`, nil when the
    /// policy does not let that page make it.
    func allowedOrigin(_ origin: String, method: HTTPRequest.Method) -> String? {
        if origins.contains(origin) { return origin }
        if anyOriginReads, method == .get || method == .head { return "*" }
        return nil
    }
}

/// CORS for browsers (https://fetch.spec.whatwg.org/#http-cors-protocol): answers preflight
/// requests and marks the responses a page may read. No credentials are ever allowed (tokens
/// travel in `Authorization`, which a listed origin's page sets itself).
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: CORSPolicy
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard policy.isEnabled else { return try await next(request, context) }
        let origin = request.headers[.origin]
        if let origin, request.method == .options, let asked = request.headers[.accessControlRequestMethod] {
            if let answer = preflight(request, origin: origin, method: HTTPRequest.Method(asked)) {
                routes.nameRoute(of: request, in: context)
                return answer
            }
            return try await next(request, context)
        }
        var response = try await next(request, context)
        if let origin, let allowed = policy.allowedOrigin(origin, method: request.method) {
            response.headers[.accessControlAllowOrigin] = allowed
            response.headers[.accessControlExposeHeaders] = CORSPolicy.exposedHeaders
        }
        // Every answer, with an Origin or without: its CORS headers depend on it, and a shared
        // cache must not give a page the copy stored for a request without one.
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
        return response
    }

    /// The answer to a preflight for `method` on the request's path, or nil (an ordinary OPTIONS
    /// answer, without CORS headers) when the policy or the resource does not allow it.
    private func preflight(_ request: Request, origin: String, method: HTTPRequest.Method?) -> Response? {
        guard let method, let allowed = policy.allowedOrigin(origin, method: method),
              let methods = routes.allowedMethods(for: request.uri.path), methods.contains(method.rawValue)
        else { return nil }
        var headers: HTTPFields = [
            .accessControlAllowOrigin: allowed,
            .accessControlAllowMethods: allowed == "*" ? "GET, HEAD" : methods.joined(separator: ", "),
            .accessControlAllowHeaders: allowed == "*" ? CORSPolicy.allowedHeaders : CORSPolicy.allowedHeaders + ", Authorization",
            .accessControlMaxAge: "600",
        ]
        if allowed != "*" { headers[.vary] = "Origin" }
        return Response(status: .noContent, headers: headers)
    }
}
