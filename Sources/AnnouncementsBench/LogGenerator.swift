import AnnouncementsDomain
import Foundation

/// Writes a deterministic synthetic log the way the store would: sealed lines in the current
/// format (a salt with each event's data, `"v":3`, linked by their sealed forms), realistic HTML
/// bodies of 300 to 1,800 bytes (with quotes to escape and some non-ASCII), and a 60/30/10 mix of
/// created, edited and deleted events.
struct LogGenerator {
    private var random: SplitMix

    init(seed: UInt64) {
        random = SplitMix(state: seed)
    }

    /// Writes `events` events to `path`; returns the file's size.
    mutating func write(events: Int, to path: String) throws -> Int {
        guard FileManager.default.createFile(atPath: path, contents: nil),
              let handle = FileHandle(forWritingAtPath: path)
        else { throw CocoaError(.fileWriteUnknown) }
        defer { try? handle.close() }
        var live: [Int] = []
        var nextId = 1
        var prev: LineHash?
        var buffer: [UInt8] = []
        var total = 0
        var at = Timestamp(millisecondsSince1970: 1_767_225_600_000)
        for seq in 1...events {
            let roll = random.next(below: 100)
            let change: Event.Change
            let id: Int
            if live.isEmpty || roll < 60 {
                id = nextId
                nextId += 1
                live.append(id)
                change = .created(AnnouncementDraft(title: title(), body: body()))
            } else if roll < 90 {
                id = live[random.next(below: live.count)]
                switch random.next(below: 3) {
                case 0: change = .edited(AnnouncementPatch(title: title()))
                case 1: change = .edited(AnnouncementPatch(body: .set(body())))
                default: change = .edited(AnnouncementPatch(title: title(), body: .set(body())))
                }
            } else {
                let index = random.next(below: live.count)
                id = live[index]
                live.swapAt(index, live.count - 1)
                live.removeLast()
                change = .deleted
            }
            at.millisecondsSince1970 += Int64(random.next(below: 2000))
            let event = Event(seq: seq, id: id, at: at, by: ["alice", "bob", "carol", "dave"][seq % 4], change: change, prev: prev, format: Event.currentFormat)
            let salt = (0..<4).map { _ in random.next() }.withUnsafeBytes { Salt(bytes: $0) }
            let start = buffer.count
            event.encodeLine(into: &buffer, salt: salt)
            prev = LineHash(link: buffer[start...])
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count > 8 << 20 {
                try handle.write(contentsOf: buffer)
                total += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
        }
        try handle.write(contentsOf: buffer)
        return total + buffer.count
    }

    private static let words = [
        "release", "meeting", "quarterly", "update", "Grails", "deploy", "office", "policy", "team",
        "security", "holiday", "schedule", "benefits", "launch", "café", "workshop", "reminder",
    ]

    private mutating func title() -> String {
        (0..<(3 + random.next(below: 6))).map { _ in Self.words[random.next(below: Self.words.count)] }.joined(separator: " ")
    }

    private mutating func body() -> String {
        let target = 300 + random.next(below: 1501)
        var html = "<p>"
        while html.utf8.count < target - 40 {
            switch random.next(below: 10) {
            case 0: html += #"<a href="https://intranet.example.com/news">read more</a> "#
            case 1: html += "<code>make deploy</code> "
            case 2: html += "&ldquo;quoted&rdquo; “curly” "
            default: html += Self.words[random.next(below: Self.words.count)] + " "
            }
        }
        html += "</p>"
        while html.utf8.count < target { html += "." }
        return html
    }
}

/// A small, fast, seedable random number generator (SplitMix64), so every run writes the same log.
struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
