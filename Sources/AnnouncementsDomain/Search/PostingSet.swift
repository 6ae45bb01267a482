/// The ids of the announcements a word is in, kept small: ids share their high 16 bits in blocks
/// of 65,536, and each block holds its low bits as a sorted list while it has few (2 bytes each),
/// as a bitmap once it has many (8 KiB, one bit each). A word in most announcements costs a bit
/// per announcement; a rare word two bytes per one. (The idea of Roaring bitmaps, Lemire et al.)
package struct PostingSet: Sendable {
    /// A block's ids: the low 16 bits of each (how a snapshot stores a block).
    package enum Block: Sendable {
        /// Sorted, at most `listLimit` of them.
        case list([UInt16])
        /// 1,024 words of 64 bits; `count` set.
        case bitmap([UInt64], count: Int)
    }

    /// A block as the set keeps it: a list in `ids` while `bits` is empty, else a bitmap in `bits`.
    /// Two stored arrays, not an enum's payloads, so that adding an id changes its array in place
    /// (an enum's payload is taken out, retained, and put back for every change).
    private struct Container: Sendable {
        var ids: [UInt16] = []
        var bits: [UInt64] = []
        /// The bits set, for a bitmap.
        var count = 0

        var isBitmap: Bool { !bits.isEmpty }

        init(ids: [UInt16]) {
            self.ids = ids
        }

        init(_ block: Block) {
            switch block {
            case .list(let ids): self.ids = ids
            case .bitmap(let bits, let count): (self.bits, self.count) = (bits, count)
            }
        }

        var block: Block { isBitmap ? .bitmap(bits, count: count) : .list(ids) }

        /// A list of more than `listLimit` ids becomes a bitmap; a bitmap of `listLimit / 2` or
        /// fewer, a list again (not at the limit itself, so that a block at it does not change
        /// form with every insert and removal).
        mutating func settle() {
            if isBitmap {
                guard count <= PostingSet.listLimit / 2 else { return }
                ids = PostingSet.ids(of: bits)
                bits = []
                count = 0
            } else if ids.count > PostingSet.listLimit {
                bits = PostingSet.bits(of: ids)
                count = ids.count
                ids = []
            }
        }
    }

    /// Past this many ids a block is a bitmap: where a list would take more than the bitmap's 8 KiB.
    package static let listLimit = 4096

    /// The blocks' high bits, sorted, and the blocks.
    package private(set) var keys: [UInt16] = []
    private var containers: [Container] = []

    /// The blocks, in the order of `keys`: what a snapshot stores.
    package var blocks: [Block] { containers.map(\.block) }

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
        self.containers = blocks.map(Container.init)
    }

    var isEmpty: Bool { containers.isEmpty }

    /// The largest id in the set; -1 when it is empty.
    var maxId: Int {
        guard let key = keys.last, let block = containers.last else { return -1 }
        let low = block.isBitmap
            ? block.bits.lastIndex { $0 != 0 }.map { $0 << 6 + 63 - block.bits[$0].leadingZeroBitCount } ?? 0
            : Int(block.ids.last ?? 0)
        return Int(key) << 16 + low
    }

    /// Adds `id` (0 ..< 2³²).
    mutating func insert(_ id: UInt32) {
        let (key, low) = (UInt16(id >> 16), UInt16(truncatingIfNeeded: id))
        // The last block, where a build or a write (in id order) adds each id: found without a search.
        let place: Int
        if let last = keys.last, last == key {
            place = keys.count - 1
        } else if let found = blockIndex(key) {
            place = found
        } else {
            let at = keys.partitionPoint { $0 < key }
            keys.insert(key, at: at)
            containers.insert(Container(ids: [low]), at: at)
            return
        }
        if containers[place].isBitmap {
            let (word, bit) = (Int(low >> 6), UInt64(1) << (low & 63))
            guard containers[place].bits[word] & bit == 0 else { return }
            containers[place].bits[word] |= bit
            containers[place].count += 1
            return
        }
        // Past the last id of the list: appended.
        if let end = containers[place].ids.last, end < low {
            containers[place].ids.append(low)
        } else {
            let at = containers[place].ids.partitionPoint { $0 < low }
            guard at == containers[place].ids.count || containers[place].ids[at] != low else { return }
            containers[place].ids.insert(low, at: at)
        }
        containers[place].settle()
    }

    /// Removes `id` when it is there.
    mutating func remove(_ id: UInt32) {
        let (key, low) = (UInt16(id >> 16), UInt16(truncatingIfNeeded: id))
        guard let place = blockIndex(key) else { return }
        if containers[place].isBitmap {
            let (word, bit) = (Int(low >> 6), UInt64(1) << (low & 63))
            guard containers[place].bits[word] & bit != 0 else { return }
            containers[place].bits[word] &= ~bit
            containers[place].count -= 1
        } else {
            let at = containers[place].ids.partitionPoint { $0 < low }
            guard at < containers[place].ids.count, containers[place].ids[at] == low else { return }
            containers[place].ids.remove(at: at)
        }
        containers[place].settle()
        dropIfEmpty(place)
    }

    /// Adds every id of `other`.
    mutating func formUnion(_ other: PostingSet) {
        for (key, block) in zip(other.keys, other.containers) {
            let at = keys.partitionPoint { $0 < key }
            guard at < keys.count, keys[at] == key else {
                keys.insert(key, at: at)
                containers.insert(block, at: at)
                continue
            }
            var words = [UInt64](repeating: 0, count: 1024)
            for each in [containers[at], block] {
                if each.isBitmap {
                    for index in words.indices { words[index] |= each.bits[index] }
                } else {
                    for low in each.ids { words[Int(low >> 6)] |= UInt64(1) << (low & 63) }
                }
            }
            let count = words.reduce(0) { $0 + $1.nonzeroBitCount }
            containers[at] = count > Self.listLimit ? Container(.bitmap(words, count: count)) : Container(ids: Self.ids(of: words))
        }
    }

    /// Takes out every id set in `bits`.
    mutating func subtract(_ bits: DenseBits) {
        var place = 0
        while place < containers.count {
            let base = Int(keys[place]) << 10
            guard base < bits.words.count else { break }
            if containers[place].isBitmap {
                for index in containers[place].bits.indices { containers[place].bits[index] &= ~bits.words[base + index] }
                containers[place].count = containers[place].bits.reduce(0) { $0 + $1.nonzeroBitCount }
                containers[place].settle()
            } else {
                containers[place].ids.removeAll { bits.words[base + Int($0 >> 6)] & (UInt64(1) << ($0 & 63)) != 0 }
            }
            if !dropIfEmpty(place) { place += 1 }
        }
    }

    /// Sets the bits of every id in `bits` (a bitmap of ids from 0, long enough for them all).
    func add(to bits: inout DenseBits) {
        bits.words.withUnsafeMutableBufferPointer { target in
            for (key, block) in zip(keys, containers) {
                let base = Int(key) << 10  // the block's first word in `bits`
                guard base < target.count else { break }
                if block.isBitmap {
                    let end = min(target.count - base, block.bits.count)
                    block.bits.withUnsafeBufferPointer { words in
                        for index in 0..<end { target[base + index] |= words[index] }
                    }
                } else {
                    block.ids.withUnsafeBufferPointer { ids in
                        for low in ids { target[base + Int(low >> 6)] |= UInt64(1) << (low & 63) }
                    }
                }
            }
        }
    }

    /// The bytes it holds (its arrays' elements, not their spare capacity or headers): what the
    /// index's memory figure counts.
    var storedBytes: Int {
        keys.count * 2 + containers.reduce(0) { $0 + $1.ids.count * 2 + $1.bits.count * 8 + 16 }
    }

    /// Takes out the block at `place` when it holds no id; whether it did.
    @discardableResult
    private mutating func dropIfEmpty(_ place: Int) -> Bool {
        guard !containers[place].isBitmap, containers[place].ids.isEmpty else { return false }
        keys.remove(at: place)
        containers.remove(at: place)
        return true
    }

    private func blockIndex(_ key: UInt16) -> Int? {
        let at = keys.partitionPoint { $0 < key }
        return at < keys.count && keys[at] == key ? at : nil
    }

    private static func bits(of ids: [UInt16]) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: 1024)
        for low in ids { words[Int(low >> 6)] |= UInt64(1) << (low & 63) }
        return words
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
