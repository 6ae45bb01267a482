/// One change to one announcement: a line of the log.
public struct Event: Sendable, Hashable {
    /// Position in the log: 1 for the first line, +1 on each next line.
    public var seq: Int
    /// The announcement the event is about.
    public var id: Int
    /// When the change was made.
    public var at: Timestamp
    /// Who made the change: a token's name, or `seed` for seed data.
    public var by: String
    /// The writer's idempotency key for the request that made this event, if it sent one.
    public var key: String?
    /// What changed.
    public var change: Change
    /// The previous line's link in the hash chain (`LineHash(link:)`); nil on line 1 and on
    /// unsealed (hand-made) lines.
    public var prev: LineHash?
    /// The line's format (`"v"`): 1 for lines written before erasure existed (no `v` field), 2
    /// since, 3 since `key` became `idempotency_key` (`Upcaster.registry` says what each changed;
    /// an event parsed from an older line has today's shape, and keeps its format). Format 2 on seals: the chain covers a line as it will read once its data is erased, and
    /// an event with data carries a random salt (`"salt"`, given to `encodeLine`; a parsed event
    /// does not keep it: only the line's link needs it, and replay is faster without it).
    /// (A byte, after `prev`: it takes no room an event did not have.)
    public var format: UInt8

    public init(seq: Int, id: Int, at: Timestamp, by: String, key: String? = nil, change: Change, prev: LineHash? = nil, format: UInt8 = 1) {
        self.seq = seq
        self.id = id
        self.at = at
        self.by = by
        self.key = key
        self.change = change
        self.prev = prev
        self.format = format
    }

    /// The format the store writes.
    public static let currentFormat: UInt8 = 3

    /// The first format whose lines can be erased (salted data, linked by the sealed form).
    public static let firstErasableFormat: UInt8 = 2

    /// Whether the line's data can be erased in place: its format seals.
    public var isErasable: Bool { format >= Self.firstErasableFormat }

    /// The first format that names the idempotency key `idempotency_key` (`key` before it).
    public static let firstIdempotencyKeyFormat: UInt8 = 3

    /// The kind of change, the log's `type` field.
    public var type: EventType { change.type }

    /// Whether the event carries `data` (created, edited, erased): what a salt goes with.
    public var hasData: Bool {
        switch change {
        case .created, .edited, .erased: true
        case .deleted, .sealed: false
        }
    }

    /// Whether erasing the event's announcement overwrites its line with the sealed form: it
    /// carries data, and it is not the erased event itself, which keeps its reason (it is the
    /// record of the erasure).
    public var isSealedByErasure: Bool { hasData && type != .erased }

    /// Moves the change out of the event, leaving `.deleted`: unlike a copy, this does not retain
    /// the change's strings (replay applies every event this way).
    package mutating func takeChange() -> Change {
        var taken = Change.deleted
        swap(&taken, &change)
        return taken
    }

    /// What an event does to its announcement.
    public enum Change: Sendable, Hashable {
        /// The announcement came into being with this title and body.
        case created(AnnouncementDraft)
        /// The fields the patch names changed.
        case edited(AnnouncementPatch)
        /// The announcement is gone; its id is never reused.
        case deleted
        /// The texts of every earlier event about the announcement were erased, for `reason`; it is
        /// gone (if it was still live), and its past states with it.
        case erased(reason: String)
        /// An event of `type` whose data was erased: only the salted digest of its data remains
        /// (`"sealed"`), which the hash chain covers. (Boxed: rare, and its digest would make
        /// every event larger.)
        indirect case sealed(EventType, digest: LineHash)

        /// The kind of change, the log's `type` field.
        public var type: EventType {
            switch self {
            case .created: .created
            case .edited: .edited
            case .deleted: .deleted
            case .erased: .erased
            case .sealed(let type, _): type
            }
        }
    }
}

/// The log's `type` field.
public enum EventType: String, Sendable, Hashable, CaseIterable {
    case created, edited, deleted, erased
}

/// 32 random bytes: the salt of the data digest of an event of format 2 or later.
public struct Salt: Sendable, Hashable, CustomStringConvertible {
    package var value: LineHash

    /// A salt from its 32 bytes.
    public init(bytes: UnsafeRawBufferPointer) {
        value = LineHash(bytes: bytes)
    }

    /// Parses 64 lowercase hex digits; nil for anything else.
    public init?(hex: UnsafeRawBufferPointer) {
        guard let value = LineHash(hex: hex) else { return nil }
        self.value = value
    }

    /// Its 64 lowercase hex digits.
    public var description: String { value.description }
}
