/// How the elements of a `SortedChunks` are ordered: by their keys.
package protocol ChunkOrder {
    associatedtype Element: Sendable
    associatedtype Key: Sendable
    static func key(of element: Element) -> Key
}

/// A sorted collection kept as segments of sorted chunks (a three-level B-tree).
///
/// Finding an element is three binary searches; inserting or removing one moves at most a chunk's
/// worth of elements. A search is guided by a *probe*: a function that tells where a stored key
/// stands relative to the key sought (negative: before it; zero: it is the one; positive: after it),
/// so that keys need not carry everything their order depends on (see `TitleKey`).
///
/// Copies share storage, and a mutation of a shared copy copies only the path to what it touches:
/// the segment list, the segment, and the chunk. So the immutable snapshot readers get after each
/// write batch costs O(n / (chunk × segment capacity)) plus the touched segments and chunks, not
/// O(n). Appending past the end (new ids) touches only the last segment and chunk.
package struct SortedChunks<Order: ChunkOrder>: Sendable {
    package typealias Element = Order.Element
    package typealias Key = Order.Key

    /// Small enough that copying a shared chunk (retaining each element) is cheap on the write path.
    static var chunkCapacity: Int { 128 }
    /// Chunks per segment: small enough that copying a shared segment's chunk list is cheap, large
    /// enough that the segment list stays short.
    static var segmentCapacity: Int { 64 }

    private struct Segment: Sendable {
        var chunks: [[Element]]
        /// Each chunk's last key, kept beside the chunks so that finding a chunk searches one array.
        var lastKeys: [Key]
        var count: Int

        /// Splits a chunk that has grown past its capacity into two halves.
        mutating func split(chunk: Int) {
            let half = SortedChunks.chunkCapacity / 2
            let upper = Array(chunks[chunk][half...])
            chunks[chunk].removeSubrange(half...)
            chunks.insert(upper, at: chunk + 1)
            lastKeys.insert(lastKeys[chunk], at: chunk + 1)
            lastKeys[chunk] = Order.key(of: chunks[chunk][half - 1])
        }

        /// Merges a small chunk into the next one, so that deletes cannot leave many tiny chunks.
        mutating func mergeIfSmall(chunk: Int) {
            guard chunks[chunk].count < SortedChunks.chunkCapacity / 4, chunk + 1 < chunks.count,
                  chunks[chunk].count + chunks[chunk + 1].count <= SortedChunks.chunkCapacity
            else { return }
            chunks[chunk].append(contentsOf: chunks[chunk + 1])
            chunks.remove(at: chunk + 1)
            lastKeys.remove(at: chunk)
        }
    }

    private var segments: [Segment] = []
    /// Each segment's last key.
    private var lastKeys: [Key] = []
    private(set) var count = 0

    package init() {}

    /// Builds from elements already sorted by key, with no duplicate keys.
    package init(sorted elements: some Collection<Element>) {
        var builder = Builder()
        for element in elements { builder.append(element) }
        self = builder.finish()
    }

    /// Builds a `SortedChunks` from elements already sorted by key, with no duplicate keys, given
    /// one at a time: each goes straight into its chunk (a snapshot's loader decodes them so,
    /// rather than into an array first, which would retain and release each element once more).
    package struct Builder {
        private var built = SortedChunks()
        private var segment = Segment(chunks: [], lastKeys: [], count: 0)
        private var chunk: [Element] = []

        package init() {
            chunk.reserveCapacity(SortedChunks.chunkCapacity)
        }

        package mutating func append(_ element: Element) {
            chunk.append(element)
            if chunk.count == SortedChunks.chunkCapacity { closeChunk() }
        }

        /// The collection of every element appended.
        package mutating func finish() -> SortedChunks {
            closeChunk()
            closeSegment()
            return built
        }

        private mutating func closeChunk() {
            guard let last = chunk.last else { return }
            segment.chunks.append(chunk)
            segment.lastKeys.append(Order.key(of: last))
            segment.count += chunk.count
            built.count += chunk.count
            chunk = []
            chunk.reserveCapacity(SortedChunks.chunkCapacity)
            if segment.chunks.count == SortedChunks.segmentCapacity { closeSegment() }
        }

        private mutating func closeSegment() {
            guard let last = segment.lastKeys.last else { return }
            built.segments.append(segment)
            built.lastKeys.append(last)
            segment = Segment(chunks: [], lastKeys: [], count: 0)
        }
    }

    /// Where a stored key stands relative to the key sought: negative before, zero at, positive after.
    typealias Probe = (Key) -> Int

    // MARK: - Lookup

    /// The element `probe` finds, if any.
    @inline(__always)
    func element(_ probe: Probe) -> Element? {
        guard let (segment, chunk, index) = found(probe) else { return nil }
        return segments[segment].chunks[chunk][index]
    }

    /// The index of the first of `keys` not before the key sought, or the last index when all are.
    @inline(__always)
    private static func lowerBound(_ keys: UnsafeBufferPointer<Key>, _ probe: Probe) -> Int {
        var low = 0, high = keys.count - 1
        while low < high {
            let mid = (low + high) / 2
            if probe(keys[mid]) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The segment and chunk that would hold the key sought, and the index in the chunk of the
    /// first element not before it. (Always inlined, with buffers rather than array copies: an id
    /// lookup, with its probe inlined too, is then three plain binary searches.)
    @inline(__always)
    private func position(_ probe: Probe) -> (segment: Int, chunk: Int, index: Int)? {
        guard !segments.isEmpty else { return nil }
        let segment = lastKeys.withUnsafeBufferPointer { Self.lowerBound($0, probe) }
        return segments.withUnsafeBufferPointer { segments in
            // Unchecked buffers: no segment is ever left without chunks (removing its last chunk
            // removes it); this guard keeps a broken invariant from reading out of bounds.
            guard segment < segments.count, !segments[segment].chunks.isEmpty else { return nil }
            let chunk = segments[segment].lastKeys.withUnsafeBufferPointer { Self.lowerBound($0, probe) }
            let first = segments[segment].chunks.withUnsafeBufferPointer { chunks in
                chunks[chunk].withUnsafeBufferPointer { elements in
                    var first = 0, end = elements.count
                    while first < end {
                        let mid = (first + end) / 2
                        if probe(Order.key(of: elements[mid])) < 0 { first = mid + 1 } else { end = mid }
                    }
                    return first
                }
            }
            return (segment, chunk, first)
        }
    }

    /// The position of the element with the key sought, if there is one.
    @inline(__always)
    private func found(_ probe: Probe) -> (segment: Int, chunk: Int, index: Int)? {
        guard let (segment, chunk, index) = position(probe) else { return nil }
        let isFound = segments[segment].chunks[chunk].withUnsafeBufferPointer { elements in
            index < elements.count && probe(Order.key(of: elements[index])) == 0
        }
        return isFound ? (segment, chunk, index) : nil
    }

    /// Up to `limit` elements starting at `offset`, in ascending or descending order.
    func slice(offset: Int, limit: Int, descending: Bool) -> [Element] {
        let offset = max(0, offset), limit = max(0, limit)
        guard offset < count, limit > 0 else { return [] }
        let wanted = min(limit, count - offset)
        // Descending from `offset` is ascending over the mirrored range, read backwards.
        let first = descending ? count - offset - wanted : offset
        var result = [Element]()
        result.reserveCapacity(wanted)
        for part in parts(first..<(first + wanted)) { result.append(contentsOf: part) }
        if descending { result.reverse() }
        return result
    }

    /// The elements at positions `range`, as slices of chunks, in order.
    private func parts(_ range: Range<Int>) -> [ArraySlice<Element>] {
        var parts: [ArraySlice<Element>] = []
        var skip = range.lowerBound, remaining = range.count
        for segment in segments where remaining > 0 {
            if skip >= segment.count { skip -= segment.count; continue }
            for chunk in segment.chunks where remaining > 0 {
                if skip >= chunk.count { skip -= chunk.count; continue }
                let end = min(chunk.count, skip + remaining)
                parts.append(chunk[skip..<end])
                remaining -= end - skip
                skip = 0
            }
        }
        return parts
    }

    /// Every element, in order.
    package var elements: some Sequence<Element> { segments.lazy.flatMap { $0.chunks.joined() } }

    /// The elements at positions `range`, in order (for work split across threads).
    package func elements(in range: Range<Int>) -> FlattenSequence<[ArraySlice<Element>]> {
        parts(range).joined()
    }

    // MARK: - Mutation

    /// Changes the element `probe` finds in place (its key must not change); false when there is none.
    @discardableResult @inline(__always)
    mutating func modify(_ probe: Probe, _ change: (inout Element) -> Void) -> Bool {
        guard let (segment, chunk, index) = found(probe) else { return false }
        change(&segments[segment].chunks[chunk][index])
        return true
    }

    /// Inserts `element`, or replaces the element with the same key; `probe` places its key.
    mutating func upsert(_ element: Element, _ probe: Probe) {
        let key = Order.key(of: element)
        if let lastKey = lastKeys.last, probe(lastKey) < 0,
           segments[segments.count - 1].chunks[segments[segments.count - 1].chunks.count - 1].count < Self.chunkCapacity {
            // The common case for ids: a new largest key, with room in the last chunk.
            let segment = segments.count - 1
            let chunk = segments[segment].chunks.count - 1
            segments[segment].chunks[chunk].append(element)
            segments[segment].lastKeys[chunk] = key
            segments[segment].count += 1
            lastKeys[segment] = key
            count += 1
            return
        }
        guard let (segment, chunk, index) = position(probe) else {
            segments = [Segment(chunks: [[element]], lastKeys: [key], count: 1)]
            lastKeys = [key]
            count = 1
            return
        }
        if index < segments[segment].chunks[chunk].count, probe(Order.key(of: segments[segment].chunks[chunk][index])) == 0 {
            segments[segment].chunks[chunk][index] = element
            return
        }
        segments[segment].chunks[chunk].insert(element, at: index)
        segments[segment].count += 1
        count += 1
        if index == segments[segment].chunks[chunk].count - 1 {
            segments[segment].lastKeys[chunk] = key
            if chunk == segments[segment].chunks.count - 1 { lastKeys[segment] = key }
        }
        if segments[segment].chunks[chunk].count > Self.chunkCapacity {
            segments[segment].split(chunk: chunk)
            if segments[segment].chunks.count > Self.segmentCapacity { split(segment: segment) }
        }
    }

    /// Removes and returns the element `probe` finds, if any.
    @discardableResult @inline(__always)
    mutating func remove(_ probe: Probe) -> Element? {
        guard let (segment, chunk, index) = found(probe) else { return nil }
        let removed = segments[segment].chunks[chunk].remove(at: index)
        segments[segment].count -= 1
        count -= 1
        if segments[segment].chunks[chunk].isEmpty {
            segments[segment].chunks.remove(at: chunk)
            segments[segment].lastKeys.remove(at: chunk)
            if segments[segment].chunks.isEmpty {
                segments.remove(at: segment)
                lastKeys.remove(at: segment)
                return removed
            }
        } else {
            if let last = segments[segment].chunks[chunk].last, index == segments[segment].chunks[chunk].count {
                segments[segment].lastKeys[chunk] = Order.key(of: last)
            }
            segments[segment].mergeIfSmall(chunk: chunk)
        }
        if let last = segments[segment].lastKeys.last { lastKeys[segment] = last }
        if segments[segment].chunks.count < Self.segmentCapacity / 4, segment + 1 < segments.count,
           segments[segment].chunks.count + segments[segment + 1].chunks.count <= Self.segmentCapacity {
            // Merge a small segment into its neighbour, so that deletes cannot leave many tiny segments.
            let next = segments.remove(at: segment + 1)
            segments[segment].chunks += next.chunks
            segments[segment].lastKeys += next.lastKeys
            segments[segment].count += next.count
            lastKeys.remove(at: segment)
        }
        return removed
    }

    /// Splits a segment that has grown past its capacity into two halves.
    private mutating func split(segment: Int) {
        let half = Self.segmentCapacity / 2
        let upperChunks = Array(segments[segment].chunks[half...])
        let upper = Segment(
            chunks: upperChunks,
            lastKeys: Array(segments[segment].lastKeys[half...]),
            count: upperChunks.reduce(0) { $0 + $1.count }
        )
        segments[segment].chunks.removeSubrange(half...)
        segments[segment].lastKeys.removeSubrange(half...)
        segments[segment].count -= upper.count
        segments.insert(upper, at: segment + 1)
        lastKeys.insert(lastKeys[segment], at: segment + 1)
        lastKeys[segment] = segments[segment].lastKeys[half - 1]
    }
}

/// Keys in their own order. Each probe is a closure literal, so that it is inlined with the search.
extension SortedChunks where Key: Comparable {
    func element(for key: Key) -> Element? {
        element { $0 < key ? -1 : ($0 == key ? 0 : 1) }
    }

    @discardableResult
    mutating func modify(_ key: Key, _ change: (inout Element) -> Void) -> Bool {
        modify({ $0 < key ? -1 : ($0 == key ? 0 : 1) }, change)
    }

    mutating func upsert(_ element: Element) {
        let key = Order.key(of: element)
        upsert(element) { $0 < key ? -1 : ($0 == key ? 0 : 1) }
    }

    @discardableResult
    mutating func remove(_ key: Key) -> Element? {
        remove { $0 < key ? -1 : ($0 == key ? 0 : 1) }
    }
}

/// `SortedChunks.Builder`s for the two read models, compiled here, where their element types are
/// known: a loader in another module (the snapshot's) calls these once per element, and a
/// generic builder called across the module boundary would not be specialised.
package struct IdIndexBuilder {
    private var builder = SortedChunks<IdOrder>.Builder()

    package init() {}

    package mutating func append(_ announcement: Announcement) {
        builder.append(announcement)
    }

    package mutating func finish() -> SortedChunks<IdOrder> {
        builder.finish()
    }
}

/// The title index's builder (see `IdIndexBuilder`).
package struct TitleIndexBuilder {
    private var builder = SortedChunks<TitleOrder>.Builder()

    package init() {}

    package mutating func append(_ key: TitleKey) {
        builder.append(key)
    }

    package mutating func finish() -> SortedChunks<TitleOrder> {
        builder.finish()
    }
}
