/// What a writer supplies to create an announcement (or to replace one wholesale).
public struct AnnouncementDraft: Sendable, Hashable {
    public var title: String
    /// The body as JSON text (see `body`).
    public var bodyText: JSONText?

    public init(title: String, body: String? = nil) {
        self.init(title: title, bodyText: body.map(JSONText.init))
    }

    public init(title: String, bodyText: JSONText?) {
        self.title = title
        self.bodyText = bodyText
    }

    /// The body (HTML), decoded, or nil.
    public var body: String? {
        get { bodyText?.string }
        set { bodyText = newValue.map(JSONText.init) }
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
        self.init(title: draft.title, body: draft.bodyText.map(BodyChange.set) ?? .clear)
    }
}

/// A change to an announcement's optional body.
public enum BodyChange: Sendable, Hashable {
    case set(JSONText)
    case clear

    /// A new body.
    public static func set(_ body: String) -> BodyChange {
        .set(JSONText(body))
    }

    /// The body after the change, as JSON text.
    public var text: JSONText? {
        switch self {
        case .set(let body): body
        case .clear: nil
        }
    }

    /// The body after the change, decoded.
    public var value: String? {
        text?.string
    }
}
