import AnnouncementsDomain
import CoreMetrics
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The announcements: the read models for readers, and durable writes through the log.
///
/// Readers take `snapshot`, an immutable value, and never wait for a disk sync. Writers' requests
/// queue up; one committer, on its own thread, takes everything queued and turns it into events
/// and lines, which the log's syncer, on another, appends: everything prepared while its last sync
/// ran, with one write and one sync (group commit). Once they are durable the committer publishes
/// the new state and answers each writer (see EventStore+Committer.swift). A failed write or sync
/// fails every write it held, leaves no partial line, and leaves the previous state in place.
public final class EventStore: Sendable {
    /// The log's path.
    public let path: String
    let rules: ValidationRules
    let logger: Logger
    let published: Mutex<Published>
    /// The published state's seq, set under `published`'s lock: what a reader with a copy of a
    /// representation made at some seq checks it against, without taking that lock or the state.
    let publishedSeq: Atomic<Int>
    /// Where each durable event's line is (see EventStore+Audit.swift).
    let index: Mutex<EventIndex>
    /// Where the lines are kept; durable lines are read back from it.
    let log: any EventLog
    /// Where reads from a log whose reads wait (`EventLog.readsWait`) run.
    let readers: DispatchQueue = {
        let queue = DispatchQueue(label: "announcements.reads", attributes: .concurrent)
        queue.setSpecific(key: EventStore.onReaders, value: true)
        return queue
    }()
    /// Where the folds of past states (`model(asOf:)`) run, one at a time: each is CPU and memory
    /// in proportion to the log.
    let pastStates = DispatchQueue(label: "announcements.past-states")
    /// Set on `readers`' threads (for tests).
    static let onReaders = DispatchSpecificKey<Bool>()
    /// Readers following the log, and the queue their reads run on (see EventStore+Feed.swift).
    let followers = Followers()
    let feedWorker = IdleWorker()
    /// The pages followers read last (only touched on `feedWorker`; the lock makes that checkable).
    let feedPages = Mutex(FeedPages(size: maxFeedPage))
    let pipeline = Pipeline()
    let committer: Committer
    let committerQueue = DispatchQueue(label: "announcements.committer")
    /// The search index, kept up to date once started (see EventStore+Search.swift).
    let search = SearchIndexer()
    /// The snapshot's search index, what the search index starts from (nil: it is built), until
    /// it is started.
    let loadedSearchIndex: Mutex<LoadedSearchIndex?>
    /// Writes and syncs the lines the committer prepares.
    let syncer: LogSyncer
    let syncedEvents = Atomic<Int>(0)
    /// Whether a lone batch is synced on the committer's thread (see `EventStore.drain`); tests
    /// turn it off to hold a sync on the syncer's thread while the committer hands more over.
    let syncsInline = Atomic<Bool>(true)
    /// Whether the looks `awaitSeals` schedules read the log; tests turn them off to keep a page
    /// of the feed that a look, finding the lines sealed, would drop at a moment of its own.
    let looksForSeals = Atomic<Bool>(true)
    /// Writes snapshots of the state beside the log (nil when snapshots are off).
    let snapshotter: Snapshotter?
    /// Counts the looks at other nodes' lines that failed (`catchUp`).
    let followFailures: Counter
    /// Why the lines other processes appended to a shared log cannot be taken in, while they
    /// cannot; flagged while it holds one (what a health check reads first, with no lock).
    let followFailure = FlaggedMutex<LogError?>(nil) { $0 != nil }
    /// Erasures run here, one at a time (see EventStore+Erasure.swift); `erasures` counts them.
    let erasureQueue = DispatchQueue(label: "announcements.erasures")
    let erasures = Atomic<Int>(0)
    /// The lines each interrupted erasure had left, which this store's open sealed
    /// (`finishErasures`), by announcement.
    let erasuresFinishedAtOpen = Mutex<[Int: [Int]]>([:])
    /// Other processes' erasures (on a shared log) whose overwritten lines this store has not read
    /// back yet (see `awaitSeals`).
    let unconfirmedSeals = Mutex(UnconfirmedSeals())
    /// What `whenErased` was given.
    let erasureHandlers = Mutex<[@Sendable (_ ids: [Int], _ seq: Int) -> Void]>([])

    /// The outcome of one request: the announcement after it (nil after a delete), or why it failed.
    typealias Outcome = Result<Announcement?, StoreError>

    /// Requests that go into the same batch, and the writer waiting for their outcomes.
    struct Waiter {
        var requests: [WriteRequest]
        var continuation: CheckedContinuation<[Outcome], Never>
        /// Only into an empty log (the seed): when the log holds events by the time the requests
        /// are decided (another process on a shared log seeded it first), nothing is appended and
        /// every outcome is nil.
        var intoEmptyLog = false
        /// When it was queued: on a shared log, how long it has waited for the writer role.
        var since = ContinuousClock.now
    }

    /// The commit pipeline's state (`CommitPipeline`) in a lock, and the semaphore its committer
    /// waits on: what writers, the committer and the syncer's thread share.
    final class Pipeline: Sendable {
        let state = Mutex(CommitPipeline<Waiter, CheckedContinuation<Void, Never>>())
        /// Signalled once for each `wake` the pipeline returns: one signal for one wait.
        let wakeUp = DispatchSemaphore(value: 0)

        /// A sync on the syncer's thread ended: wakes the committer when it waits.
        func syncEnded() {
            if state.withLock({ $0.syncEnds() }) { wakeUp.signal() }
        }
    }

    /// What readers see: the state after the last durable event, and that event's line's hash.
    struct Published {
        var model: ReadModel
        var head: LogHead?
    }

    /// What only the committer touches: the hash of the last durable line, and the idempotency keys.
    ///
    /// `@unchecked Sendable`: used only by `drain` (see EventStore+Committer.swift), which runs on the
    /// serial `committerQueue`, started only while the pipeline's committer is stopped: never two at once.
    final class Committer: @unchecked Sendable {
        var lastHash: LineHash?
        /// The seq of the durable event each idempotency key made.
        var keys: [String: Int]
        /// The salts of the data of the events it writes.
        var salts = SaltSource()

        init(lastHash: LineHash?, keys: [String: Int]) {
            self.lastHash = lastHash
            self.keys = keys
        }
    }

    /// Opens the log at `path` for writing (creating it if absent), recovers a torn last line,
    /// replays it, and appends `seed` as `created` events by `seed` when the log is empty.
    ///
    /// With snapshots on, the replay starts from the snapshot beside the log when it still matches
    /// the log (else it replays the whole log, with a warning saying why), and the store writes
    /// snapshots as `snapshots` says and when it closes (see `SnapshotPolicy`).
    ///
    /// Start-up trusts no damaged log (`LogError.Kind.damaged`, nothing written): it follows the
    /// hash chain through every line it reads (`chainCheck`: `.accept` lets breaks through, each
    /// logged as a warning), and refuses a log that no longer holds what the snapshot or the head
    /// recorded beside it (`HeadRecord`) say it held. The store records its head beside the log
    /// once open, and again when it closes.
    ///
    /// Fails at once when another process has the log open for writing.
    public static func open(
        path: String,
        rules: ValidationRules = ValidationRules(),
        seed: [AnnouncementDraft] = [],
        snapshots: SnapshotPolicy = .off,
        chainCheck: ChainCheck = .refuse,
        logger: Logger = Logger(label: "announcements.store"),
        metrics: StoreMetrics = StoreMetrics()
    ) async throws(StoreError) -> EventStore {
        try await open(path: path, rules: rules, seed: seed, snapshots: snapshots, chainCheck: chainCheck, logger: logger, metrics: metrics, operations: .system)
    }

    /// `open`, with the system calls the log's writer makes, and a hook the snapshot writer calls
    /// before each write (for tests).
    static func open(
        path: String,
        rules: ValidationRules,
        seed: [AnnouncementDraft],
        snapshots: SnapshotPolicy = .off,
        chainCheck: ChainCheck = .refuse,
        logger: Logger,
        metrics: StoreMetrics = StoreMetrics(),
        operations: FileOperations,
        beforeSnapshotWrite: (@Sendable () -> Void)? = nil
    ) async throws(StoreError) -> EventStore {
        var replay: Replay
        var snapshotSeq = 0
        let log: FileLog
        do throws(LogError) {
            log = try FileLog(path: path, operations: operations)
            do throws(LogError) {
                if snapshots.isEnabled {
                    (replay, snapshotSeq) = try replayUsingSnapshot(path: path, logIsEmpty: log.durableEnd == 0, chainCheck: chainCheck, logger: logger)
                } else {
                    let covered = try Snapshot.checkTag(besideLog: path)
                    replay = try LogReader(path: path).replay(indexing: true, chainCheck: chainCheck)
                    // Not read, but a copy of the texts an erasure after it took out all the same.
                    if let covered, replay.model.erased.values.contains(where: { $0 > covered }) {
                        deleteSnapshotFromBeforeErasure(besideLog: path, logger: logger)
                    }
                }
                try replay.refuseSealedWithoutErasure(path: path)
                try HeadRecord.check(replay, logPath: path)
            } catch {
                // Refused before anything was written: a log this open made is not left behind
                // (removed while its lock is still held).
                if log.created { unlink(path) }
                log.close()
                throw error
            }
            if let torn = replay.tornTail {
                let side = try log.setAside(from: torn.offset)
                logger.warning("moved a torn last line aside", metadata: [
                    "log.path": "\(path)", "log.line": "\(torn.line)", "log.bytes": "\(torn.count)",
                    "log.reason": "\(TornTail.reason)", "log.side_file": "\(side)",
                ])
            }
        } catch {
            throw .log(error)
        }
        let snapshotter = snapshots.isEnabled
            ? Snapshotter(logPath: path, policy: snapshots, loadedSeq: snapshotSeq, loadedWithSearch: replay.search != nil, logger: logger, failures: metrics.snapshotFailures, beforeWrite: beforeSnapshotWrite)
            : nil
        let store = try await open(log: log, replay: replay, rules: rules, seed: seed, snapshotter: snapshotter, logger: logger, metrics: metrics)
        store.recordHead()
        return store
    }

    /// A store on `log`, which holds the writer role, starting from `replay`, the state its lines
    /// fold into (indexed: `Replay.index` locates every line, `Replay.keys` holds the idempotency
    /// keys); appends `seed` as `created` events by `seed` when the log is empty. No snapshots.
    public static func open(
        log: any EventLog,
        replay: Replay,
        rules: ValidationRules = ValidationRules(),
        seed: [AnnouncementDraft] = [],
        logger: Logger = Logger(label: "announcements.store"),
        metrics: StoreMetrics = StoreMetrics()
    ) async throws(StoreError) -> EventStore {
        try await open(log: log, replay: replay, rules: rules, seed: seed, snapshotter: nil, logger: logger, metrics: metrics)
    }

    /// `open(log:replay:…)`, writing snapshots through `snapshotter`.
    static func open(
        log: any EventLog,
        replay: Replay,
        rules: ValidationRules,
        seed: [AnnouncementDraft],
        snapshotter: Snapshotter?,
        logger: Logger,
        metrics: StoreMetrics
    ) async throws(StoreError) -> EventStore {
        for broken in replay.brokenLinks {
            logger.warning("opened a log whose hash chain is broken (accepted at start-up)", metadata: ["log.path": "\(log.path)", "log.line": "\(broken.line ?? 0)", "error": "\(broken.message)"])
        }
        var replay = replay
        replay.model.buildTitleIndex()
        let store = EventStore(log: log, replay: replay, rules: rules, snapshotter: snapshotter, logger: logger, metrics: metrics)
        logger.debug("replayed the log", metadata: ["log.path": "\(log.path)", "event.seq": "\(replay.model.seq)"])
        if log.erasesInPlace, !replay.model.erased.isEmpty {
            do throws(StoreError) {
                try store.finishErasures()
            } catch {
                await store.close()
                throw error
            }
        }
        // A long replay (no snapshot, or an old one) is worth a snapshot now, not only at the next period.
        snapshotter?.published(replay.model) { store.snapshotContents(of: replay.model) }
        log.follow { [weak store] change in store?.logChanged(change) }
        if replay.model.seq == 0, !seed.isEmpty {
            let requests = seed.map { WriteRequest(action: .create($0), by: "seed") }
            let outcomes = await store.submit(requests, intoEmptyLog: true)
            if case .success(nil) = outcomes.first {
                logger.info("another process seeded the log first", metadata: ["log.path": "\(log.path)"])
                return store
            }
            for (index, outcome) in outcomes.enumerated() {
                if case .failure(let error) = outcome {
                    // The log is given up (its lock or writer role released) before the error goes out.
                    await store.close()
                    if case .invalid(let problems) = error {
                        throw .invalid(problems.map { FieldProblem(field: "seed[\(index)].\($0.field)", message: $0.message) })
                    }
                    throw error
                }
            }
            logger.info("seeded an empty log", metadata: ["log.path": "\(log.path)", "seed.count": "\(seed.count)"])
        }
        return store
    }

    private init(log: any EventLog, replay: Replay, rules: ValidationRules, snapshotter: Snapshotter?, logger: Logger, metrics: StoreMetrics) {
        self.path = log.path
        self.snapshotter = snapshotter
        self.rules = rules
        self.logger = logger
        self.published = Mutex(Published(model: replay.model, head: replay.lastHash.map { LogHead(seq: replay.model.seq, hash: $0) }))
        self.publishedSeq = Atomic(replay.model.seq)
        self.index = Mutex(replay.index)
        self.loadedSearchIndex = Mutex(replay.search)
        self.log = log
        self.committer = Committer(lastHash: replay.lastHash, keys: replay.keys)
        self.syncer = LogSyncer(log: log, metrics: metrics) { [pipeline] in pipeline.syncEnded() }
        self.followFailures = metrics.followFailures
    }

    // MARK: - Reading

    /// The current state: an immutable value that later writes do not change.
    public var snapshot: ReadModel {
        published.withLock { $0.model }
    }

    /// The current state's seq (`snapshot.seq`), read without the state's lock: a state at least
    /// this new is what `snapshot` returns next. What a reader that keeps representations by seq
    /// checks them against, on every core at once, with no write of its own.
    public var seq: Int {
        publishedSeq.load(ordering: .acquiring)
    }

    /// The seq the newest snapshot beside the log covers: 0 for none (none written yet, or deleted
    /// by an erasure); nil when this store writes none (snapshots off, a PostgreSQL log).
    public var snapshotSeq: Int? {
        snapshotter?.writtenSeq
    }

    /// The last durable line's seq and hash (nil while the log is empty): the `SEQ:SHA256` that
    /// `announcements verify` prints for the same log. Kept as each batch is published: no hashing.
    public var head: LogHead? {
        published.withLock { $0.head }
    }

    /// Whether writes can succeed now: not after a failed write or sync until one succeeds, and
    /// never again once a failed write could not be undone (see `StoreHealth`); on a shared log,
    /// not while the lines others appended cannot be taken in, nor while the writer role cannot be
    /// had (`EventLog.writeBlock`).
    public var health: StoreHealth {
        let health = syncer.health
        guard case .ok = health else { return health }
        if followFailure.flag, let failure = followFailure.withLock({ $0 }) {
            // Not a write of this node's that failed: what another appended cannot be read here.
            return .blocked(LogError(failure.kind, path: failure.path, message: "cannot take in what other nodes appended (\(failure.placeless)); this node appends nothing after lines it does not have, and tries again at each notice"))
        }
        if log.isShared, let block = log.writeBlock { return .blocked(block) }
        return .ok
    }

    /// How far the log is durable: its size in bytes, for a file.
    public var durableEnd: Int64 {
        syncer.progress.durableEnd
    }

    /// How many write batches (one write and one sync each) and events this store has appended.
    public var appendCounts: (batches: Int, events: Int) {
        (syncer.syncs.load(ordering: .relaxed), syncedEvents.load(ordering: .relaxed))
    }

    // MARK: - Writing

    /// Creates an announcement with the next id; returns it once its event is durable.
    /// With `key`, a repeat of the same request appends nothing and returns the first outcome.
    public func create(_ draft: AnnouncementDraft, by writer: String, key: String? = nil) async throws(StoreError) -> Announcement {
        try await announcement(from: submit(WriteRequest(action: .create(draft), by: writer, key: key)))
    }

    /// Changes the fields `patch` sets. An update that changes nothing appends nothing and returns
    /// the announcement as it is. With `expectedRevision`, fails unless the announcement is at it
    /// (and, with `expectedLine`, unless that revision's line has this tag: see `lineTag(of:)`);
    /// with `scope` `.own`, unless `writer` created it.
    public func update(
        id: Int,
        _ patch: AnnouncementPatch,
        by writer: String,
        scope: WriteScope = .any,
        expectedRevision: Int? = nil,
        expectedLine: LineTag? = nil,
        key: String? = nil
    ) async throws(StoreError) -> Announcement {
        let request = WriteRequest(action: .update(id: id, patch), by: writer, scope: scope, expectedRevision: expectedRevision, expectedLine: expectedLine, key: key)
        return try await announcement(from: submit(request))
    }

    /// Deletes an announcement; its id is never reused. `expectedRevision`, `expectedLine` and
    /// `scope` as for `update`.
    public func delete(
        id: Int, by writer: String, scope: WriteScope = .any, expectedRevision: Int? = nil, expectedLine: LineTag? = nil, key: String? = nil
    ) async throws(StoreError) {
        let request = WriteRequest(action: .delete(id: id), by: writer, scope: scope, expectedRevision: expectedRevision, expectedLine: expectedLine, key: key)
        _ = try await submit(request).get()
    }

    /// Finishes the writes already queued, refuses new ones, and releases the log's lock.
    public func close() async {
        await withCheckedContinuation { (closer: CheckedContinuation<Void, Never>) in
            perform(pipeline.state.withLock { $0.close(closer) })
        }
    }

    private func announcement(from outcome: Outcome) throws(StoreError) -> Announcement {
        guard let announcement = try outcome.get() else { throw .closed }
        return announcement
    }

    func submit(_ request: WriteRequest) async -> Outcome {
        await submit([request])[0]
    }

    /// When the writes the calling task submits were received, when that was before they reach
    /// the store (a write first sent to the node that holds a shared log's writer role, which did
    /// not answer): their wait for the role counts from then. Nil: from their submission.
    @TaskLocal public static var receivedAt: ContinuousClock.Instant?

    /// Queues requests together, so that they go into one batch (one write and one sync: all
    /// durable or none), and waits for their outcomes.
    func submit(_ requests: [WriteRequest], intoEmptyLog: Bool = false) async -> [Outcome] {
        let since = Self.receivedAt.map { min($0, .now) } ?? .now
        return await withCheckedContinuation { continuation in
            let waiter = Waiter(requests: requests, continuation: continuation, intoEmptyLog: intoEmptyLog, since: since)
            guard let wake = pipeline.state.withLock({ $0.submit(waiter, requests: requests.count) }) else {
                continuation.resume(returning: requests.map { _ in .failure(.closed) })
                return
            }
            perform(wake)
        }
    }

    /// Starts or wakes the committer, as the pipeline says.
    func perform(_ wake: CommitPipeline<Waiter, CheckedContinuation<Void, Never>>.Wake) {
        switch wake {
        case .start: committerQueue.async { self.drain() }
        case .wake: pipeline.wakeUp.signal()
        case .none: break
        }
    }
}
