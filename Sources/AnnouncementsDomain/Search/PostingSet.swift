/// The ids of the announcements a word is in, kept small: ids share their high 16 bits in blocks
/// of 65,536, and each block holds its low bits as a sorted list while it has few (2 bytes each),
/// as a bitmap once it has many (8 KiB, one bit each). A word in most announcements costs a bit
/// per announcement; a rare word two bytes per one. (The idea of Roaring bitmaps, Lemire et al.)
package struct PostingSet: Sendable {
    /// A block's ids: the low 16 bits of each.
    package enum Block: Sendable {
        /// Sorted, at most `listLimit` of them.
        case list([UInt16])
        /// 1,024 words of 64 bits; `count` set.
        case bitmap([UInt64], count: Int)
    }

    /// Past this many ids a block is a bitmap: where a list would take more than the bitmap's 8 KiB.
    package static let listLimit = 4096

    /// The blocks' high bits, sorted, and the blocks.
    package private(set) var keys: [UInt16] = []
    package private(set) var blocks: [Block] = []

    package init() {}

    /// A set of these blocks, as `keys` and `blocks` give them (a snapshot's); nil unless the keys
    /// are in order, each list is sorted and no longer than `listLimit`, and each bitmap has 1,024
    /// words and as many bits set as it says.
    package init?(keys: [UInt16], blocks: [Block]) {
        guard keys.count == blocks.count, zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        for block in blocks {
            switch block {
            case .list(let ids):
                guard !ids.isEmpty, ids.count <= Self.listLimit, zip(ids, ids.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
            case .bitmap(let words, let count):
                guard words.count == 1024, count > 0, words.reduce(0, { $0 + $1.nonzeroBitCount }) == count else { return nil }
            }
        }
        self.keys = keys
        self.blocks = blocks
    }

    var isEmpty: Bool { blocks.isEmpty }

    /// The largest id in the set; -1 when it is empty.
    var maxId: Int {
        guard let key = keys.last, let block = blocks.last else { return -1 }
        let low: Int = switch block {
        case .list(let ids): Int(ids.last ?? 0)
        case .bitmap(let words, _):
            words.lastIndex { $0 != 0 }.map { $0 << 6 + 63 - words[$0].leadingZeroBitCount } ?? 0
        }
        return Int(key) << 16 + low
    }

    /// Adds `id` (0 ..< 2³²).
    mutating func insert(_ id: UInt32) {
        let (key, low) = (UInt16(id >> 16), UInt16(truncatingIfNeeded: id))
        // Past the last id of the last list: where a build, in id order, adds each one.
        let last = blocks.count - 1
        if last >= 0, keys[last] == key, case .list(var ids) = blocks[last], ids.count < Self.listLimit, let end = ids.last, end < low {
            blocks[last] = .list([])
            ids.append(low)
            blocks[last] = .list(ids)
            return
        }
        guard let place = blockIndex(key) else {
            let at = keys.partitionPoint { $0 < key }
            keys.insert(key, at: at)
            blocks.insert(.list([low]), at: at)
            return
        }
        switch blocks[place] {
        case .list(var ids):
            let at = ids.partitionPoint { $0 < low }
            guard at == ids.count || ids[at] != low else { return }
            blocks[place] = .list([])  // `ids` holds the only reference now
            ids.insert(low, at: at)
            blocks[place] = ids.count > Self.listLimit ? Self.bitmap(of: ids) : .list(ids)
        case .bitmap(var words, let count):
            let (word, bit) = (Int(low >> 6), UInt64(1) << (low & 63))
            guard words[word] & bit == 0 else { return }
            blocks[place] = .list([])
            words[word] |= bit
            blocks[place] = .bitmap(words, count: count + 1)
        }
    }

    /// Removes `id` when it is there.
    mutating func remove(_ id: UInt32) {
        let (key, low) = (UInt16(id >> 16), UInt16(truncatingIfNeeded: id))
        guard let place = blockIndex(key) else { return }
        switch blocks[place] {
        case .list(var ids):
            let at = ids.partitionPoint { $0 < low }
            guard at < ids.count, ids[at] == low else { return }
            blocks[place] = .list([])
            ids.remove(at: at)
            if ids.isEmpty {
                keys.remove(at: place)
                blocks.remove(at: place)
            } else {
                blocks[place] = .list(ids)
            }
        case .bitmap(var words, let count):
            let (word, bit) = (Int(low >> 6), UInt64(1) << (low & 63))
            guard words[word] & bit != 0 else { return }
            blocks[place] = .list([])
            words[word] &= ~bit
            blocks[place] = count - 1 <= Self.listLimit / 2 ? .list(Self.ids(of: words)) : .bitmap(words, count: count - 1)
        }
    }

    /// Adds every id of `other`.
    mutating func formUnion(_ other: PostingSet) {
        for (key, block) in zip(other.keys, other.blocks) {
            let at = keys.partitionPoint { $0 < key }
            guard at < keys.count, keys[at] == key else {
                keys.insert(key, at: at)
                blocks.insert(block, at: at)
                continue
            }
            var words = [UInt64](repeating: 0, count: 1024)
            for each in [blocks[at], block] {
                switch each {
                case .list(let ids): for low in ids { words[Int(low >> 6)] |= UInt64(1) << (low & 63) }
                case .bitmap(let bits, _): for index in words.indices { words[index] |= bits[index] }
                }
            }
            let count = words.reduce(0) { $0 + $1.nonzeroBitCount }
            blocks[at] = count > Self.listLimit ? .bitmap(words, count: count) : .list(Self.ids(of: words))
        }
    }

    /// Takes out every id set in `bits`.
    mutating func subtract(_ bits: DenseBits) {
        var place = 0
        while place < blocks.count {
            let base = Int(keys[place]) << 10
            guard base < bits.words.count else { break }
            switch blocks[place] {
            case .list(let ids):
                let kept = ids.filter { bits.words[base + Int($0 >> 6)] & (UInt64(1) << ($0 & 63)) == 0 }
                blocks[place] = .list(kept)
            case .bitmap(var words, _):
                blocks[place] = .list([])
                for index in words.indices { words[index] &= ~bits.words[base + index] }
                let count = words.reduce(0) { $0 + $1.nonzeroBitCount }
                blocks[place] = count <= Self.listLimit / 2 ? .list(Self.ids(of: words)) : .bitmap(words, count: count)
            }
            if case .list(let ids) = blocks[place], ids.isEmpty {
                keys.remove(at: place)
                blocks.remove(at: place)
            } else {
                place += 1
            }
        }
    }

    /// Sets the bits of every id in `bits` (a bitmap of ids from 0, long enough for them all).
    func add(to bits: inout DenseBits) {
        bits.words.withUnsafeMutableBufferPointer { target in
            for (key, block) in zip(keys, blocks) {
                let base = Int(key) << 10  // the block's first word in `bits`
                guard base < target.count else { break }
                switch block {
                case .list(let ids):
                    ids.withUnsafeBufferPointer { ids in
                        for low in ids { target[base + Int(low >> 6)] |= UInt64(1) << (low & 63) }
                    }
                case .bitmap(let words, _):
                    let end = min(target.count - base, words.count)
                    words.withUnsafeBufferPointer { words in
                        for index in 0..<end { target[base + index] |= words[index] }
                    }
                }
            }
        }
    }

    /// The bytes it holds (its arrays' elements, not their spare capacity or headers): what the
    /// index's memory figure counts.
    var storedBytes: Int {
        keys.count * 2 + blocks.reduce(0) { total, block in
            switch block {
            case .list(let ids): total + ids.count * 2 + 16
            case .bitmap(let words, _): total + words.count * 8 + 16
            }
        }
    }

    private func blockIndex(_ key: UInt16) -> Int? {
        let at = keys.partitionPoint { $0 < key }
        return at < keys.count && keys[at] == key ? at : nil
    }

    private static func bitmap(of ids: [UInt16]) -> Block {
        var words = [UInt64](repeating: 0, count: 1024)
        for low in ids { words[Int(low >> 6)] |= UInt64(1) << (low & 63) }
        return .bitmap(words, count: ids.count)
    }

    private static func ids(of words: [UInt64]) -> [UInt16] {
        var ids: [UInt16] = []
        for (index, word) in words.enumerated() {
            var rest = word
            while rest != 0 {
                ids.append(UInt16(index << 6 + rest.trailingZeroBitCount))
                rest &= rest - 1
            }
        }
        return ids
    }
}
