/// A bitmap of ids from 0 up to a bound: what a query combines words' sets in (a bit per id, so
/// a word's set is ORed in block by block, and two words' are ANDed a word at a time).
package struct DenseBits: Sendable {
    var words: [UInt64]

    /// Room for ids 0 ... `maxId`, all clear.
    package init(maxId: Int) {
        // Whole blocks of 65,536 ids, so that a block's bitmap is ORed in without a bound check per word.
        let blocks = (max(0, maxId) >> 16) + 1
        words = [UInt64](repeating: 0, count: blocks << 10)
    }

    /// Sets the bit of `id` (0 ... the `maxId` it was made for).
    package mutating func insert(_ id: Int) {
        words[id >> 6] |= UInt64(1) << (id & 63)
    }

    mutating func formIntersection(_ other: DenseBits) {
        for index in words.indices { words[index] &= other.words[index] }
    }

    mutating func subtract(_ other: DenseBits) {
        for index in words.indices { words[index] &= ~other.words[index] }
    }

    var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Up to `limit` ids from the highest down, after skipping the first `skip` of them.
    func descending(skipping skip: Int, limit: Int) -> [Int] {
        var ids: [Int] = []
        var skip = skip
        var index = words.count - 1
        while index >= 0, ids.count < limit {
            var word = words[index]
            let count = word.nonzeroBitCount
            if skip >= count {
                skip -= count
            } else {
                while word != 0, ids.count < limit {
                    let bit = 63 - word.leadingZeroBitCount
                    word &= ~(UInt64(1) << bit)
                    if skip > 0 { skip -= 1 } else { ids.append(index << 6 + bit) }
                }
            }
            index -= 1
        }
        return ids
    }
}
