/// What a token may do. Every configured token has one role (docs/http-api.md, "Roles").
public enum Role: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Creates announcements; edits and deletes the ones it created.
    case author
    /// Creates announcements; edits and deletes any of them.
    case editor
    /// Reads history, past states and full events; writes nothing.
    case auditor
    /// Everything the others may do, and erase.
    case admin

    /// Whether this role has `permission`.
    public func may(_ permission: Permission) -> Bool {
        permission.roles.contains(self)
    }

    public var description: String { rawValue }
}

/// One thing a request may need the right to do: the rows of the role table.
public enum Permission: Sendable, Hashable, CaseIterable {
    /// Read live announcements when reads need a token (`reads: token`).
    case read
    /// Create an announcement.
    case create
    /// Edit or delete an announcement the token's writer created.
    case changeOwn
    /// Edit or delete any announcement.
    case changeAny
    /// Read what is no longer live: history, past states, full events.
    case audit
    /// Erase an announcement's text from the log.
    case erase

    /// The roles that have this permission, in `Role.allCases` order: the one table of who may do what.
    public var roles: [Role] {
        switch self {
        case .read: Role.allCases
        case .create, .changeOwn: [.author, .editor, .admin]
        case .changeAny: [.editor, .admin]
        case .audit: [.auditor, .admin]
        case .erase: [.admin]
        }
    }

    /// The roles that have this permission, for a message: `editor or admin`.
    public var rolesDescription: String {
        let names = roles.map(\.rawValue)
        guard names.count > 1, let last = names.last else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }
}

/// Which announcements a write may edit or delete: those its writer created (`author`), or any.
public enum WriteScope: Sendable, Hashable {
    case own, any

    /// The scope a role's writes have.
    public init(_ role: Role) {
        self = role.may(.changeAny) ? .any : .own
    }
}

/// Whether reading live announcements needs a token (`reads:` in the config).
public enum ReadAccess: String, Sendable, Hashable, CaseIterable {
    /// Anyone who can reach the server reads live announcements.
    case `public`
    /// Every read needs a token of any role; `/health` and the API document stay open.
    case token
}
