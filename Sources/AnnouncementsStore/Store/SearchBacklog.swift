/// The changes published and not yet in the search index, and when to index them: the batching
/// decisions of `SearchIndexer`, without threads (its driver holds those).
///
/// Waking the indexer's thread for each write costs a hand-over per write (on 2 cores, about as
/// much CPU as indexing a short announcement). So changes wait here until `batch` of them have
/// gathered, or until a search needs them (a writer who searches for what it just wrote still
/// finds it: the search waits for the index to cover its state, and that wait asks for the
/// changes now). Each flush indexes up to a seq fixed when it is asked for, so a copy of the index
/// at a seq (what a snapshot stores) is taken with exactly the changes up to it.
struct SearchBacklog<Change> {
    /// The published changes not yet taken by a flush, oldest first, one entry per published seq.
    private var entries: [(seq: Int, changes: [Change])] = []
    /// How many changes `entries` holds after `flushAskedUpTo`: those no flush asked for will take.
    private(set) var unasked = 0
    /// The seq the last flush asked for indexes up to, until a flush takes it (nil: none asked for).
    private var flushAskedUpTo: Int?
    /// How many changes wait before a flush is asked for without a search waiting.
    let batch: Int

    init(batch: Int) {
        self.batch = batch
    }

    /// The seq published last and not yet taken (nil: nothing waits).
    var latest: Int? { entries.last?.seq }

    /// The state at `seq` changed `changes`. Returns the seq a flush is to index up to when one is
    /// to be asked for now: `batch` changes wait that no flush asked for will take, or a search
    /// waits (`searchWaits`).
    mutating func add(seq: Int, changes: [Change], searchWaits: Bool) -> Int? {
        entries.append((seq, changes))
        unasked += changes.count
        guard searchWaits || unasked >= batch else { return nil }
        return askFlush()
    }

    /// A search waits for the index: the seq a flush is to index up to, when everything published
    /// is not already in one asked for (nil: nothing to ask).
    mutating func searchWaits() -> Int? {
        askFlush()
    }

    /// A flush runs: takes the changes up to `seq`, in order.
    mutating func take(upTo seq: Int) -> [(seq: Int, changes: [Change])] {
        let taken = entries.prefix { $0.seq <= seq }
        entries.removeFirst(taken.count)
        // A copy's flush (`SearchIndexer.copy(at:)`) may take changes no flush asked for.
        let asked = flushAskedUpTo ?? Int.min
        unasked -= taken.filter { $0.seq > asked }.reduce(0) { $0 + $1.changes.count }
        if asked <= seq { flushAskedUpTo = nil }
        return Array(taken)
    }

    private mutating func askFlush() -> Int? {
        guard let latest, latest > flushAskedUpTo ?? Int.min else { return nil }
        flushAskedUpTo = latest
        unasked = 0
        return latest
    }
}
