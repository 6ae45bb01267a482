/// One live announcement: the v1 (full) read model's element. Its `body` is HTML, or nil.
public struct Announcement: Sendable, Hashable {
    public var id: Int
    public var title: String
    public var body: String?
    /// The seq of the last event that changed it: its revision, for conditional requests.
    public var revision: Int

    public init(id: Int, title: String, body: String?, revision: Int) {
        self.id = id
        self.title = title
        self.body = body
        self.revision = revision
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
