import AnnouncementsDomain

/// What every page shows around its content: who is signed in, what they may start from any page,
/// and where the page's stylesheet and script are.
public struct PageChrome: Sendable {
    /// Whether a token is signed in.
    public var signedIn: Bool
    /// The signed-in token's name (its writer's name in the log).
    public var name: String
    /// The signed-in token's role.
    public var role: String
    /// Whether the role may create announcements: the page offers "New announcement".
    public var canCreate: Bool
    /// Whether the role may read history and past states: the board offers its past.
    public var canAudit: Bool
    /// Whether the role may erase announcements.
    public var mayErase: Bool
    /// Whether the role may change any announcement, or only its own.
    private let scope: WriteScope?
    /// The stylesheet's, the script's and the icon's URLs (versioned: cached for good).
    public let stylesheet = WebAssets.stylesheet.path
    public let script = WebAssets.script.path
    public let icon = WebAssets.icon.path

    /// The chrome for a visitor who is not signed in.
    public static let signedOut = PageChrome(name: nil, role: nil)

    /// The chrome for `name` with `role`, or for a visitor when they are nil. What the role may do
    /// comes from the server's table of permissions (`Permission`), never from the page.
    public init(name: String?, role: Role?) {
        signedIn = name != nil
        self.name = name ?? ""
        self.role = role.map { "\($0)" } ?? ""
        canCreate = role?.may(.create) ?? false
        canAudit = role?.may(.audit) ?? false
        mayErase = role?.may(.erase) ?? false
        scope = role.flatMap { $0.may(.changeOwn) || $0.may(.changeAny) ? WriteScope($0) : nil }
    }

    /// Whether the signed-in role may edit and delete an announcement `createdBy` created.
    public func mayChange(createdBy: String) -> Bool {
        switch scope {
        case .any: true
        case .own: createdBy == name
        case nil: false
        }
    }
}
