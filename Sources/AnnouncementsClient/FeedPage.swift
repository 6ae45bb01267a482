import Foundation

/// A page of the feed as `GET /events` sends it: a JSON array of log lines, each kept exactly as
/// the server stored it.
enum FeedPage {
    /// What each event must have besides its line.
    private struct Head: Decodable {
        var seq: Int
        var type: String
    }

    /// The events in a response's body, a JSON array of events.
    static func events(in received: AnnouncementsClient.Received) throws(ClientError) -> [FeedEvent] {
        // The decoder checks the whole document and names a missing or mistyped field.
        let heads = try received.decode([Head].self)
        let lines = elements(of: received.data)
        guard lines.count == heads.count else {
            throw .invalidJSON(detail: "the feed's array has \(heads.count) events, but \(lines.count) elements were found in it")
        }
        return zip(heads, lines).map { head, line in
            FeedEvent(seq: head.seq, type: head.type, line: String(decoding: line, as: UTF8.self))
        }
    }

    /// The bytes of each element of a JSON array, as sent (without the whitespace around it).
    /// `data` must be valid JSON: only strings and nesting are tracked.
    static func elements(of data: Data) -> [Data] {
        let bytes = [UInt8](data)
        var elements: [Data] = []
        var depth = 0, inString = false, escaped = false
        var start = 0
        func add(upTo end: Int) {
            var (lower, upper) = (start, end)
            while lower < upper, isSpace(bytes[lower]) { lower += 1 }
            while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
            if lower < upper { elements.append(Data(bytes[lower..<upper])) }
        }
        for (index, byte) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth == 1 { start = index + 1 }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth == 1 { add(upTo: index) }
                depth -= 1
            case UInt8(ascii: ",") where depth == 1:
                add(upTo: index)
                start = index + 1
            default:
                break
            }
        }
        return elements
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
