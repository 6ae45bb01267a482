import AnnouncementsDomain

/// The pages of the log that followers read last, kept so that followers at the same place share
/// one read instead of each reading the same lines.
///
/// The log is cut into pages of `EventStore.maxFeedPage` events (seqs 1...1000, 1001...2000, …).
/// A follower reads to the end of its page, so followers that are behind line up on page
/// boundaries and read each complete page once between them; those caught up share the partial
/// last page while the log stays as it is. A page of long lines, past a read's byte limit
/// (`EventStore.maxFeedPageBytes`), is read in parts and not kept.
struct FeedPages: Sendable {
    /// Complete pages by number (page `n` holds seqs `n * size + 1 ... (n + 1) * size`), with the
    /// order they were last used in, oldest first.
    private var complete: [Int: [ArraySlice<UInt8>]] = [:]
    private var recency: [Int] = []
    private var bytes = 0
    /// The last read of the incomplete last page: the lines after `after` when the log ended at `lastSeq`.
    private var partial: (after: Int, lastSeq: Int, lines: [ArraySlice<UInt8>])?
    /// Complete pages found past a read's byte limit: read from where a follower is, never kept.
    private var longPages = Set<Int>()

    let size: Int
    /// At most this many bytes of complete pages are kept; a larger page is not kept at all.
    let byteLimit: Int

    init(size: Int, byteLimit: Int = 32 << 20) {
        self.size = size
        self.byteLimit = byteLimit
    }

    /// The lines after `seq` to the end of its page (or of the log, `lastSeq`), read with `read`
    /// (`(after, limit) -> lines`) unless another follower has read them.
    mutating func lines(
        after seq: Int,
        lastSeq: Int,
        read: (_ after: Int, _ limit: Int) throws(StoreError) -> [ArraySlice<UInt8>]
    ) throws(StoreError) -> [ArraySlice<UInt8>] {
        let seq = max(seq, 0)
        guard seq < lastSeq else { return [] }
        let page = seq / size
        let first = page * size
        guard lastSeq - first >= size else {
            // The last page, still growing: shared while the log stays as it is.
            if let partial, partial.after == seq, partial.lastSeq == lastSeq { return partial.lines }
            // To the end of the page only: followers reading on then meet on its boundary.
            let lines = try read(seq, first + size - seq)
            partial = (seq, lastSeq, lines)
            return lines
        }
        if longPages.contains(page) { return try read(seq, first + size - seq) }
        let lines: [ArraySlice<UInt8>]
        if let kept = complete[page] {
            lines = kept
            recency.removeAll { $0 == page }
            recency.append(page)
        } else {
            lines = try read(first, size)
            if lines.count < size {
                // Cut short by the byte limit of a read (long lines): read in parts from now on.
                longPages.insert(page)
                if seq - first >= lines.count { return try read(seq, first + size - seq) }
            } else {
                keep(lines, as: page)
            }
        }
        return Array(lines.dropFirst(seq - first))
    }

    /// Forgets every page kept (after an erasure changed lines in them).
    mutating func removeAll() {
        complete = [:]
        recency = []
        bytes = 0
        partial = nil
    }

    private mutating func keep(_ lines: [ArraySlice<UInt8>], as page: Int) {
        let size = lines.reduce(0) { $0 + $1.count }
        guard size <= byteLimit else { return }
        while bytes + size > byteLimit, !recency.isEmpty {
            let oldest = recency.removeFirst()
            bytes -= complete.removeValue(forKey: oldest)?.reduce(0) { $0 + $1.count } ?? 0
        }
        complete[page] = lines
        recency.append(page)
        bytes += size
    }
}
