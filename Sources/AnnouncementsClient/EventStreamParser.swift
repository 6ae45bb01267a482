import Foundation

/// Reads `text/event-stream` as its specification says (WHATWG HTML, "Server-sent events"): lines
/// end with CR, LF or CRLF (also split between two chunks); a blank line ends an event; `id:`,
/// `event:`, `data:` (several are joined with LF) and `retry:` fields, a single space after the
/// colon dropped, a line without a colon a field with an empty value, other fields ignored;
/// comment lines (`:`) are heartbeats; a byte order mark at the stream's start is dropped. An
/// event is delivered when it has data and an `id:` (its seq). An event that grows past
/// `maxEventBytes` without ending is an error, not memory.
struct EventStreamParser {
    /// The most bytes one event may take before the blank line that ends it: far above any line of
    /// this API's log (a body is at most a few MB of JSON).
    static let defaultMaxEventBytes = 64 << 20
    /// The longest reconnection delay taken from a server's `retry:`.
    static let longestRetry: Duration = .seconds(300)

    let maxEventBytes: Int
    /// The reconnection delay the server asked for last (`retry:`), if any.
    private(set) var retry: Duration?
    /// The line being read, and whether the last line ended with a CR (an LF next belongs to it).
    private var line: [UInt8] = []
    private var endedWithCR = false
    /// How many of the stream's first bytes matched a UTF-8 byte order mark so far (a mark is
    /// dropped); nil once past it.
    private var byteOrderMark: Int? = 0
    /// The event being read.
    private var id: Int?
    private var type = ""
    private var data: [UInt8]?
    private var eventBytes = 0

    init(maxEventBytes: Int = EventStreamParser.defaultMaxEventBytes) {
        self.maxEventBytes = maxEventBytes
    }

    /// The events `chunk` completes.
    mutating func feed(_ chunk: Data) throws(ClientError) -> [FeedEvent] {
        // An empty chunk changes nothing (it must not forget a CR that ended the last one).
        guard !chunk.isEmpty else { return [] }
        var events: [FeedEvent] = []
        let tooLarge = chunk.withUnsafeBytes { bytes in
            var index = 0
            while let matched = byteOrderMark, index < bytes.count {
                guard bytes[index] == Self.bom[matched] else {
                    // Not a mark after all: the bytes taken for one are the line's.
                    line.append(contentsOf: Self.bom[..<matched])
                    byteOrderMark = nil
                    break
                }
                index += 1
                byteOrderMark = matched + 1 == Self.bom.count ? nil : matched + 1
            }
            if endedWithCR, index < bytes.count, bytes[index] == Self.lf { index += 1 }
            endedWithCR = false
            while index < bytes.count {
                var end = index
                while end < bytes.count, bytes[end] != Self.lf, bytes[end] != Self.cr { end += 1 }
                line.append(contentsOf: bytes[index..<end])
                if eventBytes + line.count > maxEventBytes { return true }
                guard end < bytes.count else { break }
                if bytes[end] == Self.cr {
                    if end + 1 < bytes.count {
                        if bytes[end + 1] == Self.lf { end += 1 }
                    } else {
                        endedWithCR = true
                    }
                }
                if let event = takeLine() { events.append(event) }
                index = end + 1
            }
            return false
        }
        if tooLarge {
            throw .badEventStream(detail: "an event grew past \(maxEventBytes) bytes without the blank line that ends it")
        }
        return events
    }

    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), colon = UInt8(ascii: ":"), space = UInt8(ascii: " ")

    /// Takes in the line just read; returns the event a blank line completes.
    private mutating func takeLine() -> FeedEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line[0] != Self.colon else { return nil }
        let colon = line.firstIndex(of: Self.colon) ?? line.endIndex
        let name = line[..<colon]
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == Self.space { value = value.dropFirst() }
        eventBytes += line.count
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            if data == nil { data = [] } else { data?.append(Self.lf) }
            data?.append(contentsOf: value)
        case "event": type = String(decoding: value, as: UTF8.self)
        // An id is this API's seq: digits only (not `+5`, `-1` or ` 5`, which `Int` would take).
        case "id": id = Self.digits(value)
        case "retry":
            if let milliseconds = Self.digits(value) { retry = .milliseconds(milliseconds) }
        default: break
        }
        return nil
    }

    /// The number `value` writes in ASCII digits alone; nil for anything else, or one too large.
    private static func digits(_ value: ArraySlice<UInt8>) -> Int? {
        guard !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(String(decoding: value, as: UTF8.self))
    }

    /// Ends the event being read: delivered when it has data and an id.
    private mutating func dispatch() -> FeedEvent? {
        defer { (id, type, data, eventBytes) = (nil, "", nil, 0) }
        guard let id, let data else { return nil }
        return FeedEvent(seq: id, type: type.isEmpty ? "message" : type, line: String(decoding: data, as: UTF8.self))
    }
}
