import AnnouncementsDomain
import Hummingbird

/// A query parameter a route does not take is a 400 naming it and the ones it takes, rather than
/// ignored: `?limit=5` on a list (whose parameter is `max`) would otherwise answer a page the client
/// did not ask for, as if it had. So is one given twice (`?max=5&max=50`): which one a route
/// would read is not the client's to guess. The one table of what each route takes.
///
/// The web client's pages are the exception: a link to one that was shared picks up parameters on
/// its way (a newsletter's `utm_source`, a social site's `fbclid`), and the page is still the one
/// its reader wants. A page ignores the parameters no route takes; one that some route takes but
/// the page does not (`/a/1?asOf=…`, a link made by hand) is still a 400, as a repeated one is:
/// the page would not be the one asked for.
struct QueryMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let query = request.uri.query, !query.isEmpty, let route = context.endpointPath {
            let known = Self.parameters(route: route, method: request.method)
            let isPage = (request.method == .get || request.method == .head) && WebRoutes.serves(route)
            var seen: Set<Substring> = []
            for (name, _) in request.uri.queryParameters {
                if isPage, !parametersSomeRouteTakes.contains(String(name)) { continue }
                guard known.contains(String(name)) else {
                    let takes = known.isEmpty ? "takes no query parameter" : "takes \(known.map { "`\($0)`" }.joined(separator: ", "))"
                    throw APIError(.badRequest, "unknown query parameter `\(VisibleText.escaped(String(name)))`: \(request.method) \(route) \(takes)")
                }
                guard seen.insert(name).inserted else {
                    throw APIError(.badRequest, "query parameter `\(name)` is given more than once: give it once")
                }
            }
        }
        return try await next(request, context)
    }

    /// The query parameters `method` on `route` (a template, `/v1/announcements/{id}`) takes.
    static func parameters(route: String, method: HTTPRequest.Method) -> [String] {
        guard method == .get || method == .head else { return [] }
        var path = Substring(route)
        for prefix in APIVersion.allCases.map({ "/" + $0.pathPrefix }) where path.hasPrefix(prefix + "/") { path = path.dropFirst(prefix.count) }
        return readParameters[String(path)] ?? []
    }
}

/// What each route's GET (and HEAD) takes, by its template without a version prefix; every other
/// request takes none.
private let readParameters: [String: [String]] = [
    "/announcements": ["max", "offset", "sort", "order", "asOf", "q"],
    "/announcements/{id}": ["asOf"],
    "/events": ["after", "limit"],
    // The web client's board, and where its sign-in goes next.
    "/": ["q", "offset", "asOf", "at", "tz"],
    "/sign-in": ["next"],
]

/// Every query parameter some route takes.
private let parametersSomeRouteTakes = Set(readParameters.values.joined())
