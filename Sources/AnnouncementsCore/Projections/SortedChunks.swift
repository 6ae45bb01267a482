/// How the elements of a `SortedChunks` are ordered: by their keys.
protocol ChunkOrder {
    associatedtype Element: Sendable
    associatedtype Key: Sendable
    static func key(of element: Element) -> Key
}

/// A sorted collection kept as a list of sorted chunks (a two-level B-tree).
///
/// Finding an element is two binary searches; inserting or removing one moves at most a chunk's worth
/// of elements. A search is guided by a *probe*: a function that tells where a stored key stands
/// relative to the key sought (negative: before it; zero: it is the one; positive: after it), so
/// that keys need not carry everything their order depends on (see `TitleKey`). Copies share chunks, and a mutation of a shared copy copies only the chunk list and the
/// one chunk it touches, so an immutable snapshot for readers costs O(n / chunk size) per write batch,
/// not O(n). Appending past the end (new ids) is O(1).
struct SortedChunks<Order: ChunkOrder>: Sendable {
    typealias Element = Order.Element
    typealias Key = Order.Key

    /// Small enough that copying a shared chunk (retaining each element) is cheap on the write
    /// path, large enough that the chunk list stays short.
    static var chunkCapacity: Int { 128 }

    private var chunks: [[Element]] = []
    /// Each chunk's last key, kept beside the chunks so that finding a chunk is a search of one array.
    private var lastKeys: [Key] = []
    private(set) var count = 0

    init() {}

    /// Builds from elements already sorted by key, with no duplicate keys.
    init(sorted elements: some Collection<Element>) {
        var chunk = [Element]()
        chunk.reserveCapacity(Self.chunkCapacity)
        for element in elements {
            chunk.append(element)
            if chunk.count == Self.chunkCapacity {
                chunks.append(chunk)
                lastKeys.append(Order.key(of: element))
                chunk.removeAll(keepingCapacity: true)
            }
        }
        if let last = chunk.last {
            chunks.append(chunk)
            lastKeys.append(Order.key(of: last))
        }
        count = elements.count
    }

    /// Where a stored key stands relative to the key sought: negative before, zero at, positive after.
    typealias Probe = (Key) -> Int

    // MARK: - Lookup

    /// The element `probe` finds, if any.
    func element(_ probe: Probe) -> Element? {
        guard let (chunk, index) = found(probe) else { return nil }
        return chunks[chunk][index]
    }

    /// The chunk that would hold the key sought, and the index in it of the first element not before it.
    private func position(_ probe: Probe) -> (chunk: Int, index: Int)? {
        guard !chunks.isEmpty else { return nil }
        var low = 0, high = chunks.count - 1
        while low < high {
            let mid = (low + high) / 2
            if probe(lastKeys[mid]) < 0 { low = mid + 1 } else { high = mid }
        }
        let chunk = chunks[low]
        var first = 0, end = chunk.count
        while first < end {
            let mid = (first + end) / 2
            if probe(Order.key(of: chunk[mid])) < 0 { first = mid + 1 } else { end = mid }
        }
        return (low, first)
    }

    /// The position of the element with the key sought, if there is one.
    private func found(_ probe: Probe) -> (chunk: Int, index: Int)? {
        guard let (chunk, index) = position(probe), index < chunks[chunk].count,
              probe(Order.key(of: chunks[chunk][index])) == 0
        else { return nil }
        return (chunk, index)
    }

    /// Up to `limit` elements starting at `offset`, in ascending or descending order.
    func slice(offset: Int, limit: Int, descending: Bool) -> [Element] {
        let offset = max(0, offset), limit = max(0, limit)
        guard offset < count, limit > 0 else { return [] }
        var result = [Element]()
        result.reserveCapacity(min(limit, count - offset))
        if descending {
            var skip = offset
            for chunk in chunks.reversed() {
                if skip >= chunk.count { skip -= chunk.count; continue }
                for element in chunk[..<(chunk.count - skip)].reversed() {
                    result.append(element)
                    if result.count == limit { return result }
                }
                skip = 0
            }
        } else {
            var skip = offset
            for chunk in chunks {
                if skip >= chunk.count { skip -= chunk.count; continue }
                for element in chunk[skip...] {
                    result.append(element)
                    if result.count == limit { return result }
                }
                skip = 0
            }
        }
        return result
    }

    /// Every element, in order.
    var elements: some Sequence<Element> { chunks.joined() }

    /// The elements in chunks `range`, in order (for work split across threads).
    func elements(inChunks range: Range<Int>) -> FlattenSequence<ArraySlice<[Element]>> {
        chunks[range].joined()
    }

    /// The number of chunks.
    var chunkCount: Int { chunks.count }

    // MARK: - Mutation

    /// Changes the element `probe` finds in place (its key must not change); false when there is none.
    @discardableResult
    mutating func modify(_ probe: Probe, _ change: (inout Element) -> Void) -> Bool {
        guard let (chunk, index) = found(probe) else { return false }
        change(&chunks[chunk][index])
        return true
    }

    /// Inserts `element`, or replaces the element with the same key; `probe` places its key.
    mutating func upsert(_ element: Element, _ probe: Probe) {
        let key = Order.key(of: element)
        if let lastKey = lastKeys.last, probe(lastKey) < 0, chunks[chunks.count - 1].count < Self.chunkCapacity {
            // The common case for ids: a new largest key, with room in the last chunk.
            chunks[chunks.count - 1].append(element)
            lastKeys[lastKeys.count - 1] = key
            count += 1
            return
        }
        guard let (chunk, index) = position(probe) else {
            chunks = [[element]]
            lastKeys = [key]
            count = 1
            return
        }
        if index < chunks[chunk].count, probe(Order.key(of: chunks[chunk][index])) == 0 {
            chunks[chunk][index] = element
            return
        }
        chunks[chunk].insert(element, at: index)
        count += 1
        if index == chunks[chunk].count - 1 { lastKeys[chunk] = key }
        if chunks[chunk].count > Self.chunkCapacity {
            let half = Self.chunkCapacity / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
            lastKeys.insert(lastKeys[chunk], at: chunk + 1)
            lastKeys[chunk] = Order.key(of: chunks[chunk][half - 1])
        }
    }

    /// Removes and returns the element `probe` finds, if any.
    @discardableResult
    mutating func remove(_ probe: Probe) -> Element? {
        guard let (chunk, index) = found(probe) else { return nil }
        let removed = chunks[chunk].remove(at: index)
        count -= 1
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            lastKeys.remove(at: chunk)
            return removed
        }
        if let last = chunks[chunk].last, index == chunks[chunk].count {
            lastKeys[chunk] = Order.key(of: last)
        }
        if chunks[chunk].count < Self.chunkCapacity / 4, chunk + 1 < chunks.count,
           chunks[chunk].count + chunks[chunk + 1].count <= Self.chunkCapacity {
            // Merge a small chunk into its neighbour, so that deletes cannot leave many tiny chunks.
            chunks[chunk].append(contentsOf: chunks[chunk + 1])
            chunks.remove(at: chunk + 1)
            lastKeys.remove(at: chunk)
        }
        return removed
    }
}

extension SortedChunks where Key: Comparable {
    /// A probe for `key` in the keys' own order.
    static func probe(_ key: Key) -> Probe {
        { $0 < key ? -1 : ($0 == key ? 0 : 1) }
    }

    func element(for key: Key) -> Element? {
        element(Self.probe(key))
    }

    @discardableResult
    mutating func modify(_ key: Key, _ change: (inout Element) -> Void) -> Bool {
        modify(Self.probe(key), change)
    }

    mutating func upsert(_ element: Element) {
        upsert(element, Self.probe(Order.key(of: element)))
    }

    @discardableResult
    mutating func remove(_ key: Key) -> Element? {
        remove(Self.probe(key))
    }
}
