/// An announcement's place in title order: the title ignoring case, then the id.
///
/// Case is folded by lower-casing ASCII letters (and, for titles with other letters, with
/// `lowercased()`); folded titles compare by their UTF-8 bytes. A key keeps the first 56 folded
/// bytes inline, as seven big-endian words, and nothing else that needs a reference count: the
/// title index copies chunks of keys on every write batch, and copying plain bytes is a `memcpy`.
/// Two titles that fold to the same first 56 bytes and both go on are ordered by the rest of their
/// titles, which a `TitleProbe` looks up (see `TitleProbe.order(of:title:)`).
package struct TitleKey: Sendable {
    fileprivate var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    package let id: Int
    /// Whether the folded title goes on past the head.
    package let isLong: Bool

    fileprivate static let headBytes = 56

    init(title: String, id: Int) {
        if Self.isASCII(title) {
            self.init(folded: title.utf8.lazy.map(Self.foldASCII), id: id)
        } else {
            self.init(folded: Self.folded(title), id: id)
        }
    }

    fileprivate init(folded: some Collection<UInt8>, id: Int) {
        self.id = id
        var head: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &head) { words in
            for (index, byte) in folded.prefix(Self.headBytes).enumerated() {
                // Big-endian within each word, so that word order is byte order.
                words[index / 8 * 8 + (7 - index % 8)] = byte
            }
        }
        self.head = head
        self.isLong = folded.count > Self.headBytes
    }

    /// The key as a snapshot stores it: its seven head words, in order.
    package var headWords: [UInt64] {
        [head.0, head.1, head.2, head.3, head.4, head.5, head.6]
    }

    /// A key from what a snapshot stores: the seven head words (56 bytes, each word little-endian),
    /// the id, and whether the folded title goes on past the head.
    package init(headWords words: UnsafeRawBufferPointer, id: Int, isLong: Bool) {
        @inline(__always) func word(_ index: Int) -> UInt64 {
            index * 8 + 8 <= words.count ? UInt64(littleEndian: words.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)) : 0
        }
        self.head = (word(0), word(1), word(2), word(3), word(4), word(5), word(6))
        self.id = id
        self.isLong = isLong
    }

    /// The title's bytes with case folded.
    static func folded(_ title: String) -> [UInt8] {
        (isASCII(title) ? title : title.lowercased()).utf8.map(foldASCII)
    }

    fileprivate static func isASCII(_ title: String) -> Bool {
        title.utf8.allSatisfy { $0 < 0x80 }
    }

    fileprivate static func foldASCII(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    /// The folded bytes past the head.
    static func tail(of title: String) -> ArraySlice<UInt8> {
        folded(title).dropFirst(headBytes)
    }

    /// -1, 0 or 1 by the heads alone.
    fileprivate static func compareHeads(_ lhs: TitleKey, _ rhs: TitleKey) -> Int {
        @inline(__always) func words(_ a: UInt64, _ b: UInt64) -> Int? { a == b ? nil : (a < b ? -1 : 1) }
        return words(lhs.head.0, rhs.head.0) ?? words(lhs.head.1, rhs.head.1) ?? words(lhs.head.2, rhs.head.2)
            ?? words(lhs.head.3, rhs.head.3) ?? words(lhs.head.4, rhs.head.4) ?? words(lhs.head.5, rhs.head.5)
            ?? words(lhs.head.6, rhs.head.6) ?? 0
    }
}

/// A title being placed in (or looked up in) the title index: its key and the rest of its folded
/// bytes. Probes compare with each other completely, so sorting them gives title order.
package struct TitleProbe: Comparable, Sendable {
    let key: TitleKey
    /// The folded bytes past the key's head (empty for a title that fits in it).
    let tail: ArraySlice<UInt8>

    init(_ announcement: Announcement) {
        self.init(title: announcement.title, id: announcement.id)
    }

    init(title: String, id: Int) {
        if title.utf8.count <= TitleKey.headBytes, TitleKey.isASCII(title) {
            key = TitleKey(folded: title.utf8.lazy.map(TitleKey.foldASCII), id: id)
            tail = []
        } else {
            let folded = TitleKey.folded(title)
            key = TitleKey(folded: folded, id: id)
            tail = folded.dropFirst(TitleKey.headBytes)
        }
    }

    /// Where `stored` stands relative to this title: -1 before it, 0 when it is this title's key,
    /// 1 after it. `title` gives the current title of a stored key's announcement; it is asked only
    /// when the two titles tie on their first 56 folded bytes and both go on. A stored key with
    /// this probe's id is taken to be this title's own key (an id is in the index at most once).
    func order(of stored: TitleKey, title: (Int) -> String?) -> Int {
        if stored.id == key.id { return 0 }
        let heads = TitleKey.compareHeads(stored, key)
        if heads != 0 { return heads }
        switch (stored.isLong, key.isLong) {
        case (false, true): return -1
        case (true, false): return 1
        case (false, false): return stored.id < key.id ? -1 : 1
        case (true, true):
            let storedTail = title(stored.id).map(TitleKey.tail(of:)) ?? []
            if storedTail.elementsEqual(tail) { return stored.id < key.id ? -1 : 1 }
            return storedTail.lexicographicallyPrecedes(tail) ? -1 : 1
        }
    }

    package static func < (lhs: TitleProbe, rhs: TitleProbe) -> Bool {
        let heads = TitleKey.compareHeads(lhs.key, rhs.key)
        if heads != 0 { return heads < 0 }
        if !lhs.tail.elementsEqual(rhs.tail) { return lhs.tail.lexicographicallyPrecedes(rhs.tail) }
        return lhs.key.id < rhs.key.id
    }

    package static func == (lhs: TitleProbe, rhs: TitleProbe) -> Bool {
        lhs.key.id == rhs.key.id && TitleKey.compareHeads(lhs.key, rhs.key) == 0 && lhs.tail.elementsEqual(rhs.tail)
    }
}
