/// The API's resources and the methods each accepts: what a 405 names in `Allow`.
/// `ReadRoutes` and `WriteRoutes` register exactly these.
enum RouteTable {
    /// The methods `path` accepts, or nil when no resource lives there.
    static func allowedMethods(for path: String) -> [String]? {
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if components == ["health"] || components == ["events"] || components == ["openapi.yaml"] { return ["GET"] }
        if let first = components.first, first == "v1" || first == "v2" { components.removeFirst() }
        switch components.count {
        case 1 where components[0] == "announcements":
            return ["GET", "POST"]
        case 2 where components[0] == "announcements":
            return ["GET", "PUT", "PATCH", "DELETE"]
        case 3 where components[0] == "announcements" && components[2] == "history":
            return ["GET"]
        default:
            return nil
        }
    }
}
