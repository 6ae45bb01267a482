/// An announcement's place in title order: the title ignoring case, then the id.
///
/// Case is folded by lower-casing ASCII letters (and, for titles with other letters, with
/// `lowercased()`); folded titles compare by their UTF-8 bytes. The first 56 folded bytes are kept
/// inline as seven big-endian words, so that comparing and copying keys (the title index copies
/// chunks of them on every write batch) touches no reference counts for almost every title: only
/// a title longer than 56 bytes keeps the rest of its bytes in an array.
struct TitleKey: Comparable, Sendable {
    private var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    private var tail: [UInt8]?
    let id: Int

    private static let headBytes = 56

    init(_ announcement: Announcement) {
        self.init(title: announcement.title, id: announcement.id)
    }

    init(title: String, id: Int) {
        self.id = id
        let isASCII = title.utf8.allSatisfy { $0 < 0x80 }
        let folded = isASCII ? title : title.lowercased()
        var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)
        var tail: [UInt8] = []
        withUnsafeMutableBytes(of: &head) { words in
            for (index, byte) in folded.utf8.enumerated() {
                let lower = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                if index < Self.headBytes {
                    // Big-endian within each word, so that word order is byte order.
                    words[index / 8 * 8 + (7 - index % 8)] = lower
                } else {
                    tail.append(lower)
                }
            }
        }
        self.head = head
        self.tail = tail.isEmpty ? nil : tail
    }

    static func < (lhs: TitleKey, rhs: TitleKey) -> Bool {
        let order = compare(lhs, rhs)
        return order != 0 ? order < 0 : lhs.id < rhs.id
    }

    static func == (lhs: TitleKey, rhs: TitleKey) -> Bool {
        lhs.id == rhs.id && compare(lhs, rhs) == 0
    }

    /// -1, 0 or 1 by folded title alone.
    private static func compare(_ lhs: TitleKey, _ rhs: TitleKey) -> Int {
        @inline(__always) func words(_ a: UInt64, _ b: UInt64) -> Int? { a == b ? nil : (a < b ? -1 : 1) }
        if let order = words(lhs.head.0, rhs.head.0) ?? words(lhs.head.1, rhs.head.1) ?? words(lhs.head.2, rhs.head.2)
            ?? words(lhs.head.3, rhs.head.3) ?? words(lhs.head.4, rhs.head.4) ?? words(lhs.head.5, rhs.head.5)
            ?? words(lhs.head.6, rhs.head.6) {
            return order
        }
        switch (lhs.tail, rhs.tail) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let a?, let b?):
            if a == b { return 0 }
            return a.lexicographicallyPrecedes(b) ? -1 : 1
        }
    }
}
