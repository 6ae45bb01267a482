/// Finds a word's slot in the search index from its UTF-8 bytes, without making a `String` of
/// them: an open-addressing hash table (linear probing, FNV-1a) of slots, whose words the index
/// keeps. Building the index looks up every word of every text here.
struct WordTable: Sendable {
    private static let empty: Int32 = -1
    private static let removed: Int32 = -2

    private var buckets = [Int32](repeating: WordTable.empty, count: 1024)
    /// Buckets holding a slot or a removal mark.
    private var occupied = 0
    /// Buckets holding a slot.
    private var live = 0

    /// The FNV-1a hash of `word`.
    static func hash(_ word: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }

    /// The slot of the word with hash `hash` for which `isWord` is true (given a slot, it compares
    /// that slot's word with the one looked for); nil when absent.
    func find(hash: UInt64, isWord: (Int) -> Bool) -> Int? {
        buckets.withUnsafeBufferPointer { buckets in
            var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
            while true {
                let slot = buckets[bucket]
                if slot == Self.empty { return nil }
                if slot >= 0, isWord(Int(slot)) { return Int(slot) }
                bucket = (bucket + 1) & (buckets.count - 1)
            }
        }
    }

    /// Whether two words are the same bytes.
    static func same(_ stored: [UInt8], _ word: UnsafeBufferPointer<UInt8>) -> Bool {
        stored.count == word.count && stored.withUnsafeBufferPointer { $0.elementsEqual(word) }
    }

    /// Adds `slot`, whose word hashes to `hash` (not in the table yet); `hashOf` gives any slot's
    /// hash, for a table that grows.
    mutating func insert(_ slot: Int, hash: UInt64, hashOf: (Int) -> UInt64) {
        if (occupied + 1) * 4 > buckets.count * 3 {
            // Removal marks are dropped by a rebuild: it grows only when the words themselves fill it.
            rebuild(capacity: (live + 1) * 2 > buckets.count ? buckets.count * 2 : buckets.count, hashOf: hashOf)
        }
        var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
        while buckets[bucket] >= 0 { bucket = (bucket + 1) & (buckets.count - 1) }
        if buckets[bucket] == Self.empty { occupied += 1 }
        buckets[bucket] = Int32(slot)
        live += 1
    }

    /// Takes out `slot`, whose word hashes to `hash`.
    mutating func remove(_ slot: Int, hash: UInt64) {
        var bucket = Int(truncatingIfNeeded: hash) & (buckets.count - 1)
        while buckets[bucket] != Self.empty {
            if buckets[bucket] == Int32(slot) {
                buckets[bucket] = Self.removed
                live -= 1
                return
            }
            bucket = (bucket + 1) & (buckets.count - 1)
        }
    }

    /// The table's own bytes.
    var storedBytes: Int { buckets.count * 4 }

    private mutating func rebuild(capacity: Int, hashOf: (Int) -> UInt64) {
        let slots = buckets.filter { $0 >= 0 }
        buckets = [Int32](repeating: Self.empty, count: capacity)
        occupied = 0
        live = slots.count
        for slot in slots {
            var bucket = Int(truncatingIfNeeded: hashOf(Int(slot))) & (capacity - 1)
            while buckets[bucket] >= 0 { bucket = (bucket + 1) & (capacity - 1) }
            buckets[bucket] = slot
            occupied += 1
        }
    }
}
