import Foundation

/// An announcement in full (API v1, and any single announcement in either version).
public struct Announcement: Sendable, Hashable, Codable {
    public var id: Int
    public var title: String
    /// HTML; nil when the announcement has no body.
    public var body: String?
    /// The server's ETag for this revision, when the response carried one: pass it as `ifMatch`
    /// to a write so that it fails with `ClientError.changedBySomeoneElse` if the announcement
    /// changed in between.
    public var revision: String?

    public init(id: Int, title: String, body: String?, revision: String? = nil) {
        self.id = id
        self.title = title
        self.body = body
        self.revision = revision
    }

    private enum CodingKeys: String, CodingKey {
        case id, title, body
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        body = try container.decodeIfPresent(String.self, forKey: .body)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
    }
}

/// An announcement's summary (API v2 lists): what a list screen shows.
public struct AnnouncementSummary: Sendable, Hashable, Codable {
    public var id: Int
    public var title: String

    public init(id: Int, title: String) {
        self.id = id
        self.title = title
    }
}

/// One page of a list.
public struct Page<Item: Sendable & Hashable>: Sendable, Hashable {
    public var items: [Item]
    /// How many announcements there are in all (the server's `X-Total-Count`).
    public var total: Int
    /// Where this page starts.
    public var offset: Int

    public init(items: [Item], total: Int, offset: Int) {
        self.items = items
        self.total = total
        self.offset = offset
    }

    /// Whether there are announcements after this page.
    public var hasMore: Bool { offset + items.count < total }
}

/// The server's health: it answers, whether it can take writes, and how far its log goes.
public struct Health: Sendable, Hashable, Codable {
    /// `ok`, or `degraded` while the server cannot write to its log (reads still work).
    public var status: String
    /// The seq of the last event in the log.
    public var seq: Int
    /// The last event's line as `SEQ:SHA256` (nil for an empty log): record it, and
    /// `announcements verify --expect-head` proves later that the log still holds it.
    public var head: String?
    /// Why writes cannot succeed, while `status` is `degraded`.
    public var reason: String?

    public init(status: String, seq: Int, head: String? = nil, reason: String? = nil) {
        self.status = status
        self.seq = seq
        self.head = head
        self.reason = reason
    }
}

/// How a list is ordered.
public enum SortField: String, Sendable, CaseIterable {
    case id, title
}

public enum SortOrder: String, Sendable, CaseIterable {
    case asc, desc
}

/// What a partial update does to the body.
public enum BodyChange: Sendable, Hashable {
    /// Leaves it as it is.
    case keep
    /// Replaces it.
    case set(String)
    /// Removes it.
    case clear
}
