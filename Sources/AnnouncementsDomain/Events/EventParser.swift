/// Reads one log line (without its newline) into an `Event`.
///
/// A single-pass, validating JSON reader that knows the event schema: it accepts any valid JSON
/// object (fields in any order, escapes, unknown fields skipped), and rejects anything else with a
/// message naming the field or the column. Its fast paths are what the store writes: strings without
/// escapes become `String`s with one copy, found eight bytes at a time.
public enum EventParser {
    /// Parses one line. Throws a `LineProblem` saying what is wrong.
    public static func parse(_ line: UnsafeRawBufferPointer) throws(LineProblem) -> Event {
        var scanner = JSONScanner(line)
        return try scanner.event()
    }

    /// Parses one line given as bytes.
    public static func parse(_ line: some Collection<UInt8>) throws(LineProblem) -> Event {
        try Array(line).withBytes { bytes throws(LineProblem) in try parse(bytes) }
    }
}

/// Why one line of a log is not a valid event.
public struct LineProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// True when the line is not JSON at all (as a line cut short by a crash is), rather than JSON
    /// that is not a valid event.
    public var isMalformedJSON: Bool
    /// Set when the line is an event of a type or a format this version does not know (written by
    /// a newer version): not damage, but a reason to upgrade.
    public var unknown: UnknownEvent?

    /// What a message about a last line that is not JSON adds: it ends with its newline, so it
    /// was written whole (a crash tears only what comes after the last newline).
    public static let wholeLastLine = " (the last line, but it ends with its newline: it was written whole, so the log is damaged, not torn by a crash; restore the log from a backup, or, if the line is garbage a crash left on a file system that does not order data before sizes and was never acknowledged, cut it off the log by hand)"

    public init(_ message: String, isMalformedJSON: Bool = false) {
        self.message = message
        self.isMalformedJSON = isMalformedJSON
    }

    init(_ unknown: UnknownEvent) {
        self.init(unknown.description)
        self.unknown = unknown
    }

    public var description: String { message }
}

/// The outline of a line this version cannot read because a newer one wrote it: its event type or
/// its format (`"v"`) is not one this version knows. Readers that go on past such a line (`verify`,
/// `history`) use its `seq` and `id` to keep their place.
public struct UnknownEvent: Sendable, Hashable, CustomStringConvertible {
    public var seq: Int
    public var id: Int
    /// The `type` field as written.
    public var type: String?
    /// The `v` field, when it is newer than `Event.currentFormat`.
    public var newerFormat: Int?
    /// The line's `prev`, when it has one that reads as a hash.
    public var prev: LineHash?

    public var description: String {
        if let newerFormat {
            return "format \(newerFormat) (\"v\":\(newerFormat)) is not known to this version (\(Release.version)), which reads formats 1 to \(Event.currentFormat); upgrade"
        }
        return "event type \"\(type ?? "")\" is not known to this version (\(Release.version)), which knows \(EventType.allCases.map(\.rawValue).joined(separator: ", ")); upgrade"
    }
}

// MARK: - The event schema

extension JSONScanner {
    /// Reads the event the line holds. A line that is not one only because a newer version wrote
    /// it (an unknown `type` or `v`) throws a problem with `unknown` set, whatever else is wrong.
    package mutating func event() throws(LineProblem) -> Event {
        do {
            return try eventFields()
        } catch {
            var outliner = JSONScanner(bytes)
            guard !error.isMalformedJSON, let unknown = outliner.unknownOutline() else { throw error }
            throw LineProblem(unknown)
        }
    }

    /// The outline of a line whose `type` or `v` this version does not know; nil for any other
    /// line (or one that is not a JSON object). Only reads what it needs, skipping other values:
    /// it runs on lines that failed, never on the way of a good one.
    private mutating func unknownOutline() -> UnknownEvent? {
        var seq: Int?, id: Int?, type: String?, newerFormat: Int?, prev: LineHash?
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else { return nil }
        do throws(LineProblem) {
            try object { scanner, key throws(LineProblem) in
                switch key {
                case .seq: seq = try scanner.positiveInteger(field: "seq")
                case .id: id = try scanner.positiveInteger(field: "id")
                case .type: type = try scanner.string(field: "type")
                case .v:
                    let format = try scanner.positiveInteger(field: "v")
                    if format > Event.currentFormat { newerFormat = format }
                case .prev:
                    if scanner.null() { break }
                    prev = try scanner.stringBytes(field: "prev") { LineHash(hex: $0) }
                default: try scanner.skipValue(depth: 1)
                }
            }
        } catch {
            return nil
        }
        // Every event, of any version, has a seq and an id: a line without is damage.
        guard let seq, let id else { return nil }
        if newerFormat == nil {
            guard let type, EventType(rawValue: type) == nil else { return nil }
        }
        return UnknownEvent(seq: seq, id: id, type: type, newerFormat: newerFormat, prev: prev)
    }

    private mutating func eventFields() throws(LineProblem) -> Event {
        var fields = EventFields()
        var seen: UInt16 = 0
        func once(_ bit: UInt16, _ name: StaticString) throws(LineProblem) {
            guard seen & bit == 0 else { throw LineProblem("field `\(name)` appears twice") }
            seen |= bit
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            throw LineProblem("not a JSON object: a line must start with '{'", isMalformedJSON: true)
        }
        try object { scanner, key throws(LineProblem) in
            switch key {
            case .seq: try once(1, "seq"); fields.seq = try scanner.positiveInteger(field: "seq")
            case .id: try once(2, "id"); fields.id = try scanner.positiveInteger(field: "id")
            case .type:
                try once(4, "type")
                let name = try scanner.string(field: "type")
                guard let value = EventType(rawValue: name) else {
                    throw LineProblem("unknown type \"\(name)\" (expected created, edited, deleted or erased)")
                }
                fields.type = value
            case .at:
                try once(8, "at")
                fields.at = try scanner.stringBytes(field: "at") { bytes throws(LineProblem) in
                    guard let time = Timestamp.parse(bytes) else {
                        throw LineProblem("field `at`: \"\(String(decoding: bytes, as: UTF8.self))\" is not an RFC 3339 time (like 2026-11-21T09:30:00.000Z)")
                    }
                    return time
                }
            case .by:
                try once(16, "by")
                let name = try scanner.string(field: "by")
                guard !name.isEmpty else { throw LineProblem("field `by` must not be empty") }
                fields.by = name
            case .key:
                try once(128, "key")
                fields.key = try scanner.idempotencyKey(field: "key")
            case .idempotencyKey:
                try once(2048, "idempotency_key")
                fields.idempotencyKey = try scanner.idempotencyKey(field: "idempotency_key")
            case .data:
                try once(32, "data")
                fields.data = try scanner.dataFields()
            case .prev:
                try once(64, "prev")
                if scanner.null() { break }
                fields.prev = try scanner.stringBytes(field: "prev") { bytes throws(LineProblem) in
                    guard let hash = LineHash(hex: bytes) else {
                        throw LineProblem("field `prev`: expected 64 lowercase hex digits (a SHA-256)")
                    }
                    return hash
                }
            case .v:
                try once(256, "v")
                fields.format = try scanner.positiveInteger(field: "v")
                guard fields.format <= Event.currentFormat else {
                    throw LineProblem("field `v`: format \(fields.format) is not known to this version, which reads formats 1 to \(Event.currentFormat): upgrade")
                }
            case .salt:
                try once(512, "salt")
                // Checked for its length only: its digits matter to the line's link alone, which
                // a salt that is not hex breaks (`verify` finds it). Replay never decodes it.
                fields.hasSalt = try scanner.stringBytes(field: "salt") { bytes throws(LineProblem) in
                    guard bytes.count == 64 else { throw LineProblem("field `salt`: expected 64 lowercase hex digits") }
                    return true
                }
            case .sealed:
                try once(1024, "sealed")
                fields.sealed = try scanner.stringBytes(field: "sealed") { bytes throws(LineProblem) in
                    guard let digest = LineHash(hex: bytes) else { throw LineProblem("field `sealed`: expected 64 lowercase hex digits (a SHA-256)") }
                    return digest
                }
            case .title, .body, .reason, .other:
                try scanner.skipValue(depth: 1)
            }
        }
        skipWhitespace()
        guard isAtEnd else { throw syntax("unexpected text after the JSON object") }
        if fields.format < Event.currentFormat { try Upcaster.upcast(&fields) }
        return try fields.event()
    }

    private mutating func idempotencyKey(field: String) throws(LineProblem) -> String {
        let text = try string(field: field)
        guard !text.isEmpty else { throw LineProblem("field `\(field)` must not be empty") }
        return text
    }

    private mutating func dataFields() throws(LineProblem) -> EventFields.DataFields {
        guard peek() == UInt8(ascii: "{") else { throw LineProblem("field `data`: expected an object") }
        var fields = EventFields.DataFields()
        var seen = (title: false, body: false)
        try object { scanner, key throws(LineProblem) in
            switch key {
            case .title:
                guard !seen.title else { throw LineProblem("field `data.title` appears twice") }
                seen.title = true
                fields.title = scanner.null() ? .null : .text(try scanner.string(field: "data.title"))
            case .body:
                guard !seen.body else { throw LineProblem("field `data.body` appears twice") }
                seen.body = true
                fields.body = scanner.null() ? .null : .text(try scanner.text(field: "data.body"))
            case .reason:
                guard case .absent = fields.reason else { throw LineProblem("field `data.reason` appears twice") }
                fields.reason = .text(try scanner.string(field: "data.reason"))
            default:
                try scanner.skipValue(depth: 2)
            }
        }
        return fields
    }
}

