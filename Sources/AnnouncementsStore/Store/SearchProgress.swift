/// How far the search index has come, and the searches waiting for it: the decisions of
/// `SearchIndexer`, without threads or continuations (its driver holds those).
///
/// A search reads the index once it covers the state the request reads (`seq`): a writer who
/// searches for what it just wrote finds it. Until then it waits, and a wait that lasts too long
/// ends unanswered (the driver's timeout).
struct SearchProgress<Waiter> {
    /// The seq the index covers; nil until it is first built.
    private(set) var seq: Int?
    private var waiters: [Int: (seq: Int, waiter: Waiter)] = [:]
    private var nextTicket = 0

    enum WaitAction {
        /// The index covers it already: search now.
        case ready
        /// Wait, holding this ticket (for `timeOut`).
        case wait(ticket: Int)
    }

    /// Whether a search waits.
    var isWaited: Bool { !waiters.isEmpty }

    /// A search that needs the index to cover `seq`.
    mutating func wait(for seq: Int, _ waiter: Waiter) -> WaitAction {
        if let covered = self.seq, covered >= seq { return .ready }
        let ticket = nextTicket
        nextTicket += 1
        waiters[ticket] = (seq, waiter)
        return .wait(ticket: ticket)
    }

    /// The index now covers `seq`: returns the waiters it covers, to wake.
    mutating func advance(to seq: Int) -> [Waiter] {
        let covered = max(self.seq ?? 0, seq)
        self.seq = covered
        let ready = waiters.filter { $0.value.seq <= covered }
        for ticket in ready.keys { waiters[ticket] = nil }
        return ready.values.map(\.waiter)
    }

    /// The wait with `ticket` lasted too long: returns its waiter, to wake unanswered, unless it
    /// was woken already.
    mutating func timeOut(_ ticket: Int) -> Waiter? {
        waiters.removeValue(forKey: ticket)?.waiter
    }
}
