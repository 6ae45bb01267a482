/// What a writer supplies to create an announcement (or to replace one wholesale).
public struct AnnouncementDraft: Sendable, Hashable {
    public var title: String
    public var body: String?

    public init(title: String, body: String? = nil) {
        self.title = title
        self.body = body
    }
}

/// A partial change to an announcement: nil leaves a field as it is.
public struct AnnouncementPatch: Sendable, Hashable {
    /// A new title, or nil to keep the current one.
    public var title: String?
    /// A new body (`.set`), a cleared one (`.clear`), or nil to keep the current one.
    public var body: BodyChange?

    public init(title: String? = nil, body: BodyChange? = nil) {
        self.title = title
        self.body = body
    }

    /// The patch that replaces both fields, as a PUT does.
    public init(replacingWith draft: AnnouncementDraft) {
        self.init(title: draft.title, body: draft.body.map(BodyChange.set) ?? .clear)
    }
}

/// A change to an announcement's optional body.
public enum BodyChange: Sendable, Hashable {
    case set(String)
    case clear

    /// The body after the change.
    public var value: String? {
        switch self {
        case .set(let body): body
        case .clear: nil
        }
    }
}
