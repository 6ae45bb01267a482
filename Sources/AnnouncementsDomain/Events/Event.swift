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
    /// The SHA-256 of the previous line's bytes; nil on line 1 and on unsealed (hand-made) lines.
    public var prev: LineHash?

    public init(seq: Int, id: Int, at: Timestamp, by: String, key: String? = nil, change: Change, prev: LineHash? = nil) {
        self.seq = seq
        self.id = id
        self.at = at
        self.by = by
        self.key = key
        self.change = change
        self.prev = prev
    }

    /// The kind of change, the log's `type` field.
    public var type: EventType { change.type }

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

        /// The kind of change, the log's `type` field.
        public var type: EventType {
            switch self {
            case .created: .created
            case .edited: .edited
            case .deleted: .deleted
            }
        }
    }
}

/// The log's `type` field.
public enum EventType: String, Sendable, Hashable, CaseIterable {
    case created, edited, deleted
}
