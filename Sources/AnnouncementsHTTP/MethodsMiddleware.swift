import HTTPTypes
import Hummingbird

/// The methods every resource takes without a route of its own: `HEAD` answers what `GET` would,
/// headers only (the router sends it to the GET handler), and `OPTIONS` answers 204 with the
/// `Allow` of the resource.
struct MethodsMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch request.method {
        case .head:
            // Routed to the GET handler (`autoGenerateHeadEndpoints`, or a HEAD route of its own);
            // errors too lose their body.
            return try await next(request, context).headKeepingLength()
        case .options:
            guard let allowed = routes.allowedMethods(for: request.uri.path) else { return try await next(request, context) }
            return Response(status: .noContent, headers: [.allow: allowed.joined(separator: ", ")])
        default:
            return try await next(request, context)
        }
    }
}
