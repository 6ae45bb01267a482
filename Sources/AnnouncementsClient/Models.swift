import Foundation

/// An announcement in full (API v1, and any single announcement in every version).
public struct Announcement: Sendable, Hashable, Codable {
    public var id: Int
    public var title: String
    /// HTML; nil when the announcement has no body.
    public var body: String?
    /// The server's ETag for this revision, when the response carried one: pass it as `ifMatch`
    /// to a write so that it fails with `ClientError.changedBySomeoneElse` if the announcement
    /// changed in between.
    public var revision: String?
    /// When it was created, when it last changed, the seq of that change, and the start of its
    /// body's plain text: sent in API v3 (nil in v1 and v2).
    public var details: AnnouncementDetails?

    public init(id: Int, title: String, body: String?, revision: String? = nil, details: AnnouncementDetails? = nil) {
        self.id = id
        self.title = title
        self.body = body
        self.revision = revision
        self.details = details
    }

    private enum CodingKeys: String, CodingKey {
        case id, title, body
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        body = try container.decodeIfPresent(String.self, forKey: .body)
        details = try AnnouncementDetails.decodeIfPresent(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(body, forKey: .body)
        try details?.encode(to: encoder)
    }
}

/// An announcement's summary (API v2 lists, and v3's with `details`): what a list screen shows.
public struct AnnouncementSummary: Sendable, Hashable, Codable {
    public var id: Int
    public var title: String
    /// When it was created and last changed, its revision and an excerpt: sent in API v3.
    public var details: AnnouncementDetails?

    public init(id: Int, title: String, details: AnnouncementDetails? = nil) {
        self.id = id
        self.title = title
        self.details = details
    }

    private enum CodingKeys: String, CodingKey {
        case id, title
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        title = try container.decode(String.self, forKey: .title)
        details = try AnnouncementDetails.decodeIfPresent(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try details?.encode(to: encoder)
    }
}

/// What API v3 adds to an announcement and to each item of a list.
public struct AnnouncementDetails: Sendable, Hashable, Codable {
    /// When it was created.
    public var createdAt: Date
    /// When it last changed (its creation, if it never did).
    public var updatedAt: Date
    /// The seq of its last change in the server's log (the JSON's `revision`); grows with each change.
    public var revisionSeq: Int
    /// The start of its body as plain text (markup taken out), at most about 200 characters; "" without a body.
    public var excerpt: String

    public init(createdAt: Date, updatedAt: Date, revisionSeq: Int, excerpt: String) {
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.revisionSeq = revisionSeq
        self.excerpt = excerpt
    }

    private enum CodingKeys: String, CodingKey {
        case createdAt, updatedAt, revision, excerpt
    }

    /// The details in an item's JSON, nil when it has none (v1 and v2).
    static func decodeIfPresent(from decoder: any Decoder) throws -> AnnouncementDetails? {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.contains(.createdAt) else { return nil }
        return try AnnouncementDetails(from: decoder)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        createdAt = try Self.date(container, .createdAt)
        updatedAt = try Self.date(container, .updatedAt)
        revisionSeq = try container.decode(Int.self, forKey: .revision)
        excerpt = try container.decode(String.self, forKey: .excerpt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.serverTime(createdAt), forKey: .createdAt)
        try container.encode(Self.serverTime(updatedAt), forKey: .updatedAt)
        try container.encode(revisionSeq, forKey: .revision)
        try container.encode(excerpt, forKey: .excerpt)
    }

    /// An RFC 3339 time as the server writes it (`2026-11-21T09:30:00.000Z`).
    private static func date(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an RFC 3339 time with milliseconds: \(text)")
        }
        return date
    }

    /// `date` as the server writes a time: RFC 3339 in UTC with milliseconds, rounded to the
    /// nearest (a `Date` read from `.272Z` holds 0.27199…, which a formatter would cut to `.271`).
    public static func serverTime(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        let fraction = Int(milliseconds - seconds * 1000)
        return whole.dropLast() + "." + String(fraction + 1000).dropFirst() + "Z"
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

/// What an erasure did (`AnnouncementsClient.erase`).
public struct Erasure: Sendable, Hashable, Codable {
    /// The announcement erased.
    public var id: Int
    /// The `erased` event's seq.
    public var seq: Int
    /// The seqs of its lines overwritten by their sealed forms.
    public var sealedLines: [Int]
    /// Whether it finished an earlier erasure (by event `seq`) whose overwrite had failed (its
    /// answer a 503, perhaps sent again by this client), rather than made one.
    public var finishedEarlier: Bool

    public init(id: Int, seq: Int, sealedLines: [Int], finishedEarlier: Bool = false) {
        self.id = id
        self.seq = seq
        self.sealedLines = sealedLines
        self.finishedEarlier = finishedEarlier
    }

    private enum CodingKeys: String, CodingKey {
        case id, seq, sealedLines, finishedEarlier
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        seq = try container.decode(Int.self, forKey: .seq)
        sealedLines = try container.decode([Int].self, forKey: .sealedLines)
        // Sent only when true.
        finishedEarlier = try container.decodeIfPresent(Bool.self, forKey: .finishedEarlier) ?? false
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
