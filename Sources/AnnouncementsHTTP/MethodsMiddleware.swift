import HTTPTypes
import Hummingbird

/// The methods every resource takes without a route of its own: `HEAD` answers what `GET` would,
/// headers only (the router sends it to the GET handler), and `OPTIONS` answers 204 with the
/// `Allow` of the resource (for `*`, of the server), and, for one that takes `PATCH`, the patch
/// documents it takes (`Accept-Patch`, RFC 5789 3.1).
struct MethodsMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch request.method {
        case .head:
            // Routed to the GET handler (`autoGenerateHeadEndpoints`, or a HEAD route of its own);
            // errors too lose their body.
            return try await next(request, context).headKeepingLength()
        case .options:
            // `OPTIONS *` asks about the server as a whole (RFC 9110 9.3.7).
            let allowed = request.uri.path == "*" ? routes.serverMethods() : routes.allowedMethods(for: request.uri.path)
            guard let allowed else { return try await next(request, context) }
            routes.nameRoute(of: request, in: context)
            var headers: HTTPFields = [.allow: allowed.joined(separator: ", ")]
            if allowed.contains("PATCH") { headers[.acceptPatch] = JSONBody.acceptPatch }
            return Response(status: .noContent, headers: headers)
        default:
            return try await next(request, context)
        }
    }
}
