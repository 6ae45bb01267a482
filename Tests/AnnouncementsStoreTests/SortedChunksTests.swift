import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// Integers in their own order.
enum IntOrder: ChunkOrder {
    static func key(of element: Int) -> Int { element }
}

@Suite struct SortedChunksTests {
    /// Numbers that look random and are the same on every run: `count` of them below `bound`.
    static func scattered(_ count: Int, below bound: Int, seed: Int = 1) -> [Int] {
        (0..<count).map { ($0 &+ seed) &* 2_654_435_761 % bound }
    }

    /// Checks every way of reading `chunks` against `expected`, a sorted array.
    func check(_ chunks: SortedChunks<IntOrder>, equals expected: [Int]) {
        #expect(chunks.count == expected.count)
        #expect(Array(chunks.elements) == expected)
        let offsets = Self.scattered(20, below: expected.count + 6), limits = Self.scattered(20, below: 301, seed: 7)
        for (offset, limit) in zip(offsets, limits) {
            let ascending = Array(expected.dropFirst(offset).prefix(limit))
            let descending = Array(expected.reversed().dropFirst(offset).prefix(limit))
            #expect(chunks.slice(offset: offset, limit: limit, descending: false) == ascending)
            #expect(chunks.slice(offset: offset, limit: limit, descending: true) == descending)
            let upper = offset + limit / 2
            let range = min(offset, expected.count)..<min(upper, expected.count)
            #expect(Array(chunks.elements(in: range)) == Array(expected[range]))
        }
    }

    @Test("inserts, removals and lookups agree with a sorted array, through chunk and segment splits and merges")
    func agreesWithSortedArray() {
        var chunks = SortedChunks<IntOrder>()
        var expected = Set<Int>()
        // Enough keys for several segments (each holds up to 64 chunks of 128), inserted out of order.
        for key in Self.scattered(30_000, below: 1_000_000) {
            chunks.upsert(key)
            expected.insert(key)
        }
        for key in (1_000_000..<1_002_000) {
            chunks.upsert(key)  // appends past the end
            expected.insert(key)
        }
        check(chunks, equals: expected.sorted())
        let snapshot = chunks, before = expected.sorted()

        // Remove most keys, so that chunks and segments shrink and merge; some keys are absent.
        for key in expected.sorted(by: { $0 &* 40_503 % 65_521 < $1 &* 40_503 % 65_521 }).prefix(28_000) {
            #expect(chunks.remove(key) == key)
            expected.remove(key)
        }
        #expect(chunks.remove(-1) == nil)
        check(chunks, equals: expected.sorted())
        for key in expected.prefix(100) {
            #expect(chunks.element(for: key) == key)
            #expect(chunks.modify(key) { _ in })
        }
        #expect(chunks.element(for: -5) == nil)
        #expect(Array(snapshot.elements) == before, "a copy is not changed by later writes")

        // Emptied and filled again.
        for key in expected { chunks.remove(key) }
        check(chunks, equals: [])
        for key in stride(from: 10_000, to: 0, by: -1) { chunks.upsert(key) }
        check(chunks, equals: Array(1...10_000))
    }

    @Test("built from sorted elements, it reads back the same")
    func buildsFromSorted() {
        for count in [0, 1, 127, 128, 129, 8192, 8193, 20_000] {
            let elements = Array(0..<count).map { $0 * 2 }
            var chunks = SortedChunks<IntOrder>(sorted: elements)
            check(chunks, equals: elements)
            chunks.upsert(3)
            #expect(chunks.element(for: 3) == 3 || count < 2)
        }
    }
}
