/// The decisions of the write path: who queues, when the committer starts, wakes, waits and stops,
/// and what it does next. A value type without threads, locks or continuations: its driver
/// (`EventStore.submit`, `EventStore.drain`, the log's syncer) holds it in a lock, calls one
/// transition at a time, and does what the transition returns (see EventStore+Committer.swift).
///
/// Each hand-over between threads is an action here, made only when the thread handed to needs
/// it: the committer is started when it is stopped, and woken (one signal for one wait) only while
/// it waits, and only for what it waits for: a sync's end, news of a shared log, or enough queued
/// requests (`wakeAt`: one when it has nothing else to do; while `busy` requests or more wait for
/// their syncs, a quarter of them and at least `prepareChunk`, so that under load it wakes for a
/// chunk of requests at a time, not for each: a request that arrives while others' sync runs
/// cannot be synced before that sync ends anyway). `handOvers` counts them.
struct CommitPipeline<Waiter, Closer> {
    /// What the committer's thread is doing.
    enum Committer: Equatable {
        /// Not running: the next thing to do starts it.
        case stopped
        /// Running: it looks at the pipeline again before it waits or stops.
        case running
        /// Waiting to be woken: by a sync's end, news, a close, or `wakeAt` queued requests.
        case waiting(wakeAt: Int)
    }

    /// What a submitter, a close or the log's news does to the committer.
    enum Wake: Equatable {
        /// Nothing: it runs, or will look before it waits.
        case none
        /// Start it (it was stopped).
        case start
        /// Signal it (it waits; one signal for one wait).
        case wake
    }

    /// What the committer does next (`next`).
    enum Step {
        /// Act on a shared log's news (nothing is in flight): give up the writer role, take in the
        /// lines others appended; then commit `waiters` (possibly none).
        case news(yieldRole: Bool, catchUp: Bool, waiters: [Waiter])
        /// Commit these waiters' requests: prepare them and hand their lines to the syncer.
        case commit([Waiter])
        /// A sync ended: finish the batches it made durable.
        case finish
        /// Wait for a wake (the committer is `waiting`).
        case wait
        /// Close the log and resume these closers (the committer is `stopped`).
        case close([Closer])
        /// Nothing to do (the committer is `stopped`).
        case stop
    }

    /// The hand-overs between threads the pipeline asked for.
    struct HandOvers: Equatable {
        var starts = 0
        var wakes = 0
    }

    private(set) var committer = Committer.stopped
    private var queue: [(waiter: Waiter, requests: Int)] = []
    /// The number of requests queued.
    private(set) var queuedRequests = 0
    private(set) var isClosed = false
    private var closers: [Closer] = []
    /// What a shared log said that the committer has not acted on.
    private var news = EventStore.LogNews()
    /// Another process asked for the writer role: no batch starts until those in flight are
    /// finished and the role is given up.
    private var yielding = false
    /// A sync ended since the committer last looked at what is durable.
    private var syncEnded = false
    private(set) var handOvers = HandOvers()

    /// The fewest queued requests that wake the committer while `busy` requests wait for their syncs.
    let prepareChunk: Int
    let busy: Int

    init(prepareChunk: Int = 4, busy: Int = 16) {
        self.prepareChunk = prepareChunk
        self.busy = busy
    }

    // MARK: - Submitters, closers and the log

    /// A writer queues `requests` requests (`waiter` waits for their outcomes). Nil: refused, the
    /// pipeline is closed.
    mutating func submit(_ waiter: Waiter, requests: Int) -> Wake? {
        guard !isClosed else { return nil }
        queue.append((waiter, requests))
        queuedRequests += requests
        if case .waiting(let wakeAt) = committer, queuedRequests < wakeAt { return Wake.none }
        return wakeCommitter()
    }

    /// Closing: the requests queued are committed, then the log is closed and `closer` resumed;
    /// every later `submit` is refused.
    mutating func close(_ closer: Closer) -> Wake {
        isClosed = true
        closers.append(closer)
        return wakeCommitter()
    }

    /// A shared log says another process appended lines, or wants the writer role. Nothing once closed.
    mutating func logChanged(appended: Bool, roleWanted: Bool) -> Wake {
        guard !isClosed else { return .none }
        if appended { news.appended = true }
        if roleWanted { news.roleWanted = true }
        return wakeCommitter()
    }

    // MARK: - The syncer

    /// A sync on the syncer's thread ended (failed or not). Returns whether to signal the committer:
    /// it waits (a stopped one has nothing in flight, and is not started for it).
    mutating func syncEnds() -> Bool {
        syncEnded = true
        return committer == .stopped ? false : wakeCommitter() == .wake
    }

    // MARK: - The committer

    /// What the committer does next, given the requests of the batches it has handed to the
    /// syncer and not finished (`inFlight`, nil when there are none).
    mutating func next(inFlight: Int?) -> Step {
        committer = .running
        if news.roleWanted {
            yielding = true
            news.roleWanted = false
        }
        guard let inFlight else {
            // Nothing in flight: no sync's end is left to finish.
            syncEnded = false
            // News is acted on between batches; until then it stays.
            if yielding || news.appended {
                defer {
                    yielding = false
                    news.appended = false
                }
                return .news(yieldRole: yielding, catchUp: news.appended, waiters: takeAll())
            }
            if !queue.isEmpty { return .commit(takeAll()) }
            committer = .stopped
            guard isClosed, !closers.isEmpty else { return .stop }
            defer { closers = [] }
            return .close(closers)
        }
        // Batches are in flight. While yielding, none starts before they are finished; else what
        // is queued is taken at once (preparing it costs less than a wait and a wake).
        if !yielding, !queue.isEmpty { return .commit(takeAll()) }
        if syncEnded {
            syncEnded = false
            return .finish
        }
        // Closing waits for the batches in flight, as the requests queued do.
        committer = .waiting(wakeAt: yielding ? Int.max : inFlight >= busy ? max(prepareChunk, inFlight / 4) : 1)
        return .wait
    }

    /// Puts waiters back at the front of the queue (a batch prepared on lines that failed, or the
    /// rest of one cut short), to go before those queued since.
    mutating func putBack(_ waiters: [(waiter: Waiter, requests: Int)]) {
        queue.insert(contentsOf: waiters, at: 0)
        queuedRequests += waiters.reduce(0) { $0 + $1.requests }
    }

    private mutating func takeAll() -> [Waiter] {
        defer {
            queue = []
            queuedRequests = 0
        }
        return queue.map(\.waiter)
    }

    private mutating func wakeCommitter() -> Wake {
        switch committer {
        case .running:
            return .none
        case .stopped:
            committer = .running
            handOvers.starts += 1
            return .start
        case .waiting:
            committer = .running
            handOvers.wakes += 1
            return .wake
        }
    }
}

/// Steps compared (the tests compare them with what each transition should return).
extension CommitPipeline.Step: Equatable where Waiter: Equatable, Closer: Equatable {}
