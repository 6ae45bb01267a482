/// One event in an audit trail, with the announcement as it was just before and just after.
public struct HistoryEntry: Sendable {
    /// The event.
    public var event: Event
    /// Its 1-based line number in the log.
    public var line: Int
    /// The line's exact bytes, without the newline.
    public var bytes: ArraySlice<UInt8>
    /// The announcement before the event; nil for `created`.
    public var before: Announcement?
    /// The announcement after the event; nil for `deleted`.
    public var after: Announcement?
    /// Whether the announcement's texts are erased: this line or an earlier one of it is sealed, or
    /// this is its `erased` event. `before` and `after` then hold no text of it (the fold reads a
    /// sealed line as an empty title and no body), and a trail shows that the texts are gone.
    public var textsErased = false
}

/// A point in the log's history: a seq, or a time.
public enum LogPoint: Sendable, Hashable, CustomStringConvertible {
    case seq(Int)
    case time(Timestamp)

    /// Reads `1234` as a seq and anything else as an RFC 3339 time; nil when it is neither.
    public init?(_ text: String) {
        if let seq = Int(text), seq >= 0 {
            self = .seq(seq)
        } else if let time = Timestamp(rfc3339: text) {
            self = .time(time)
        } else {
            return nil
        }
    }

    /// The seq, or the time in UTC as the log writes it (`2026-11-21T09:30:00.000Z`): text that
    /// `init(_:)` reads back as the same point, and that needs no escaping in a URL's query.
    public var description: String {
        switch self {
        case .seq(let seq): String(seq)
        case .time(let time): time.description
        }
    }

    public func isAtOrBefore(_ event: Event) -> Bool {
        switch self {
        case .seq(let seq): seq <= event.seq
        case .time(let time): time <= event.at
        }
    }

    public func isAtOrAfter(_ event: Event) -> Bool {
        switch self {
        case .seq(let seq): seq >= event.seq
        case .time(let time): time >= event.at
        }
    }
}

/// Which events an audit trail shows.
public struct HistoryFilter: Sendable, Hashable {
    /// Only this announcement's events.
    public var id: Int?
    /// Only events at or after this point.
    public var since: LogPoint?
    /// Only events at or before this point.
    public var until: LogPoint?
    /// Only events by this writer.
    public var by: String?
    /// Only events of this type.
    public var type: EventType?

    public init(id: Int? = nil, since: LogPoint? = nil, until: LogPoint? = nil, by: String? = nil, type: EventType? = nil) {
        self.id = id
        self.since = since
        self.until = until
        self.by = by
        self.type = type
    }

    /// Whether `event` passes every filter that is set.
    public func matches(_ event: Event) -> Bool {
        (id.map { $0 == event.id } ?? true)
            && (since.map { $0.isAtOrBefore(event) } ?? true)
            && (until.map { $0.isAtOrAfter(event) } ?? true)
            && (by.map { $0 == event.by } ?? true)
            && (type.map { $0 == event.type } ?? true)
    }
}

/// An audit trail, one line at a time, in log order: the same fold as start-up, with each event
/// that matches the filter handed over with the announcement before and after it.
public struct HistoryFold: Sendable {
    /// The log's name in errors (its path).
    public let path: String
    public let filter: HistoryFilter
    private var model = ReadModel()
    /// Announcements that a line this version does not know was about.
    private var touchedByUnknown: Set<Int> = []
    /// Announcements with a sealed line or their `erased` event among the lines folded: their
    /// texts are erased. An entry handed over before its announcement's `erased` event, when the
    /// erasure was interrupted before its lines were sealed, says so only once this set has it:
    /// a caller that shows entries at the end marks them then.
    public private(set) var textsErased: Set<Int> = []
    /// The largest id created in the lines folded so far (deleted ones included).
    public var maxId: Int { model.maxId }
    /// Whether the lines start after the log's first (a server's feed followed from a seq): an
    /// event about an announcement not seen, or after a gap, is taken as it comes (its `before`
    /// unknown: nil), not refused.
    private let startsMidLog: Bool

    public init(path: String, filter: HistoryFilter, startsMidLog: Bool = false) {
        self.path = path
        self.filter = filter
        self.startsMidLog = startsMidLog
        model.deferTitleIndex()
    }

    /// Applies the next line; gives `body` its entry when it matches. Returns false once the
    /// filter's `until` is reached. Throws at the first line that is not an event or does not apply,
    /// but for a line of an event type or format this version does not know (a newer version wrote
    /// it): that one goes to `unknown` as it is, when its id matches, and the fold goes on past it.
    /// (What such a line did is unknown, so a later event of its announcement that does not apply
    /// is taken as it comes rather than refused.)
    public mutating func add(
        _ line: LogLine,
        unknown: (LogLine, UnknownEvent) -> Void = { _, _ in },
        _ body: (HistoryEntry) -> Void
    ) throws(LogError) -> Bool {
        let event: Event
        switch line.parsed {
        case .success(let parsed): event = parsed
        case .failure(let problem):
            guard let outline = problem.unknown else { throw LogError(.invalidLine, path: path, line: line.number, message: problem.message) }
            model.skip(outline.seq, id: outline.id)
            touchedByUnknown.insert(outline.id)
            if filter.id == nil || filter.id == outline.id { unknown(line, outline) }
            return true
        }
        let before = model.announcement(id: event.id)
        do throws(ApplyProblem) {
            try model.apply(event)
        } catch {
            guard startsMidLog || touchedByUnknown.contains(event.id) else {
                throw LogError(.invalidLine, path: path, line: line.number, message: error.message)
            }
            model.force(event)
        }
        switch event.change {
        case .sealed, .erased: textsErased.insert(event.id)
        case .created, .edited, .deleted: break
        }
        if filter.matches(event) {
            var entry = HistoryEntry(event: event, line: line.number, bytes: line.bytes, before: before, after: model.announcement(id: event.id))
            entry.textsErased = textsErased.contains(event.id)
            body(entry)
        }
        if case .seq(let last)? = filter.until, event.seq >= last { return false }
        return true
    }
}
