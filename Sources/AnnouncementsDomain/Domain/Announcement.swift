/// One live announcement: the v1 (full) read model's element. Its `body` is HTML, or nil.
public struct Announcement: Sendable, Hashable {
    public var id: Int
    public var title: String
    /// The body as JSON text: held as the log has it, decoded only when asked (see `body`).
    public var bodyText: JSONText?
    /// The seq of the last event that changed it: its revision, for conditional requests.
    public var revision: Int
    /// The writer that created it (its `created` event's `by`): an author may change only its own.
    /// Not part of any representation.
    public var createdBy: String
    /// When it was created: its `created` event's `at`.
    public var createdAt: Timestamp
    /// When it last changed: the `at` of the event `revision` names.
    public var updatedAt: Timestamp

    public init(id: Int, title: String, body: String?, revision: Int, createdBy: String, createdAt: Timestamp, updatedAt: Timestamp) {
        self.init(id: id, title: title, bodyText: body.map(JSONText.init), revision: revision, createdBy: createdBy, createdAt: createdAt, updatedAt: updatedAt)
    }

    public init(id: Int, title: String, bodyText: JSONText?, revision: Int, createdBy: String, createdAt: Timestamp, updatedAt: Timestamp) {
        self.id = id
        self.title = title
        self.bodyText = bodyText
        self.revision = revision
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The announcement a `created` event with seq `revision`, written by `writer` at `at`, makes.
    package init(id: Int, created draft: AnnouncementDraft, revision: Int, by writer: String, at: Timestamp) {
        self.init(id: id, title: draft.title, bodyText: draft.bodyText, revision: revision, createdBy: writer, createdAt: at, updatedAt: at)
    }

    /// The body (HTML), decoded, or nil.
    public var body: String? {
        get { bodyText?.string }
        set { bodyText = newValue.map(JSONText.init) }
    }

    /// Applies an edit made by the event with seq `revision` at `at`; returns the old title if it changed.
    @discardableResult
    package mutating func apply(_ patch: AnnouncementPatch, revision: Int, at: Timestamp) -> String? {
        var oldTitle: String?
        if let title = patch.title, !title.utf8.elementsEqual(self.title.utf8) {
            oldTitle = self.title
            self.title = title
        }
        if let body = patch.body { bodyText = body.text }
        self.revision = revision
        updatedAt = at
        return oldTitle
    }

    /// What of `patch` would change this announcement: the fields it sets to something else, byte
    /// for byte (a canonically equal spelling is still a change); nil when it changes nothing. The
    /// store writes only that, and `verify` reports an `edited` event for which it is nil.
    package func changes(_ patch: AnnouncementPatch) -> AnnouncementPatch? {
        var patch = patch
        if let title = patch.title, title.utf8.elementsEqual(self.title.utf8) { patch.title = nil }
        if let body = patch.body, body.text == bodyText { patch.body = nil }
        return patch.title != nil || patch.body != nil ? patch : nil
    }

    /// The start of the body's plain text (see `HTMLText.excerpt`): v3's `excerpt`; "" without a body.
    public var excerpt: String {
        bodyText.map { HTMLText.excerpt(of: $0) } ?? ""
    }

    /// The v2 (summary) view of this announcement.
    public var summary: AnnouncementSummary { AnnouncementSummary(id: id, title: title) }
}

/// The v2 (summary) read model's element: what a list needs, without the body.
public struct AnnouncementSummary: Sendable, Hashable {
    public var id: Int
    public var title: String

    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }
}
