import Hummingbird
import Synchronization

/// The API's routes and the methods each accepts: what a 405 names in `Allow`.
///
/// Loaded from the router once every route is registered (see `buildRouter`), so that it cannot
/// drift from the routes themselves.
final class RouteTable: Sendable {
    /// Each route's path components (nil for a parameter such as `{id}`), method and template
    /// (`/announcements/{id}`).
    private let routes = Mutex<[(components: [Substring?], method: String, template: String)]>([])

    /// The order methods are named in `Allow`.
    private static let methodOrder = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    func load(_ routes: [Router<AnnouncementsRequestContext>.RouteDescription]) {
        let loaded = routes.map { route in
            let template = route.path.description
            let components = template.split(separator: "/").map { $0.first == "{" ? nil : $0 }
            return (components, route.method.rawValue, template.hasPrefix("/") ? template : "/" + template)
        }
        self.routes.withLock { $0 = loaded }
    }

    /// The methods `path` accepts (`HEAD` wherever `GET` is, and `OPTIONS`), or nil when no
    /// resource lives there.
    func allowedMethods(for path: String) -> [String]? {
        Self.allowed(matches(path).map(\.method))
    }

    /// The template of the route `path` is on (`/announcements/{id}` for `/announcements/3`), or
    /// nil when no resource lives there.
    func template(for path: String) -> String? {
        matches(path).first?.template
    }

    /// Names the route of a request answered before it reached one (an `OPTIONS`, a CORS
    /// preflight, a 405) by its template, as the router names those it routes: what the access
    /// log and `http_requests_total` count it under, in place of `NotFound`.
    func nameRoute(of request: Request, in context: some RequestContext) {
        // (The router names a request it found no route for `NotFound`: a 405 has been there.)
        guard [nil, "NotFound"].contains(context.coreContext.endpointPath.value), let template = template(for: request.uri.path) else { return }
        context.coreContext.endpointPath.value = template
    }

    /// The routes `path` is on, with any method.
    private func matches(_ path: String) -> [(components: [Substring?], method: String, template: String)] {
        let parts = path.split(separator: "/")
        return routes.withLock { routes in
            routes.filter { route in
                route.components.count == parts.count
                    && zip(route.components, parts).allSatisfy { component, part in component.map { $0 == part } ?? true }
            }
        }
    }

    /// The methods the server as a whole accepts, for `OPTIONS *` (RFC 9110 9.3.7): every one a
    /// resource takes.
    func serverMethods() -> [String] {
        Self.allowed(routes.withLock { $0.map(\.method) }) ?? ["OPTIONS"]
    }

    /// `methods`, with `HEAD` wherever `GET` is and `OPTIONS`, each once, in the usual order; nil
    /// for none.
    private static func allowed(_ methods: [String]) -> [String]? {
        guard !methods.isEmpty else { return nil }
        var allowed = Set(methods)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        allowed.insert("OPTIONS")
        return allowed.sorted { (Self.methodOrder.firstIndex(of: $0) ?? .max, $0) < (Self.methodOrder.firstIndex(of: $1) ?? .max, $1) }
    }

    /// The path of a route `path` was probably meant to be (`/announcement` → `/announcements`,
    /// `/Announcements/3` → `/announcements/3`): one as many components long, its fixed ones
    /// at most two edits from what was sent in all, ignoring case, the sent parameters kept.
    /// Routes that take `method` come first; nil when none is that close.
    func suggestion(for path: String, method: String) -> String? {
        let parts = path.split(separator: "/")
        guard !parts.isEmpty, parts.allSatisfy({ $0.count <= 64 }) else { return nil }
        let candidates = routes.withLock { routes in
            routes.compactMap { route -> (distance: Int, otherMethod: Bool, path: String)? in
                guard route.components.count == parts.count else { return nil }
                var distance = 0
                for (component, part) in zip(route.components, parts) {
                    guard let component else { continue }
                    // Lengths that differ by more than the edits left are too far apart: most 404s
                    // cost a comparison of lengths per route, not a distance.
                    guard abs(component.count - part.count) <= 2 - distance else { return nil }
                    distance += Self.editDistance(component.lowercased(), part.lowercased())
                    guard distance <= 2 else { return nil }
                }
                let suggested = "/" + zip(route.components, parts).map { String($0 ?? $1) }.joined(separator: "/")
                guard suggested != path else { return nil }
                return (distance, route.method != method, suggested)
            }
        }
        return candidates.min { ($0.distance, $0.otherMethod ? 1 : 0, $0.path) < ($1.distance, $1.otherMethod ? 1 : 0, $1.path) }?.path
    }

    /// Levenshtein's distance between two short texts: the fewest insertions, deletions and
    /// replacements of characters that make one the other.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
