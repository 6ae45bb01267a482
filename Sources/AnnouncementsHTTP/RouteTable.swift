import Hummingbird
import Synchronization

/// The API's routes and the methods each accepts: what a 405 names in `Allow`.
///
/// Loaded from the router once every route is registered (see `buildRouter`), so that it cannot
/// drift from the routes themselves.
final class RouteTable: Sendable {
    /// Each route's path components (nil for a parameter such as `{id}`) and method.
    private let routes = Mutex<[(components: [Substring?], method: String)]>([])

    /// The order methods are named in `Allow`.
    private static let methodOrder = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    func load(_ routes: [Router<AnnouncementsRequestContext>.RouteDescription]) {
        let loaded = routes.map { route in
            let components = route.path.description.split(separator: "/").map { $0.first == "{" ? nil : $0 }
            return (components, route.method.rawValue)
        }
        self.routes.withLock { $0 = loaded }
    }

    /// The methods `path` accepts (`HEAD` wherever `GET` is, and `OPTIONS`), or nil when no
    /// resource lives there.
    func allowedMethods(for path: String) -> [String]? {
        let parts = path.split(separator: "/")
        let methods = routes.withLock { routes in
            routes.filter { route in
                route.components.count == parts.count
                    && zip(route.components, parts).allSatisfy { component, part in component.map { $0 == part } ?? true }
            }.map(\.method)
        }
        guard !methods.isEmpty else { return nil }
        var allowed = Set(methods)
        if allowed.contains("GET") { allowed.insert("HEAD") }
        allowed.insert("OPTIONS")
        return allowed.sorted { (Self.methodOrder.firstIndex(of: $0) ?? .max, $0) < (Self.methodOrder.firstIndex(of: $1) ?? .max, $1) }
    }
}
