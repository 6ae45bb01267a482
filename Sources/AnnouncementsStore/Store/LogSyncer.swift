import AnnouncementsDomain
import Dispatch
import Synchronization

/// The log's writer: a loop on a thread of its own that appends the lines the committer hands over
/// to the log, durably, with one append (for the file: one write and one sync) for everything
/// handed over while the last one ran (group commit). It starts when lines are handed over and
/// ends when none are left.
///
/// A committer with nothing else to do may run the loop on its own thread instead (`inline`): one
/// writer alone then waits for one thread, not three (committer, syncer, committer again); each
/// wake of a sleeping thread costs about as much here as a tenth of a sync.
///
/// It knows nothing of events, nor of which log it appends to (`EventLog`): only bytes, where they
/// go, and how far the log is durable. When an append fails (the log leaves none of its bytes),
/// it drops the lines handed over after them (they were prepared on top of the failed ones), and
/// takes no more until the committer has seen the failure (`resume(after:)`).
final class LogSyncer: Sendable {
    /// Lines handed over and not yet durable: a write or a sync failed for `start..<end`.
    struct Failure: Error {
        var start: Int64
        var end: Int64
        var error: LogError
    }

    private struct State {
        /// Lines handed over and not yet written, in order, and where the first goes in the file.
        var pending: [[UInt8]] = []
        /// How many lines `pending` holds.
        var pendingCount = 0
        var pendingStart: Int64
        var isRunning = false
        /// Everything before it is written and synced.
        var durableEnd: Int64
        var failure: Failure?
        var isClosed = false
        /// The last write or sync's error, until one succeeds; whether it left the file unusable.
        var lastError: LogError?
        var isUnusable = false
    }

    private let log: any EventLog
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "announcements.sync")
    /// Called after each sync, failed or not (the committer waits on it).
    private let synced: @Sendable () -> Void
    private let metrics: StoreMetrics
    /// How many syncs have ended, failed or not: a look that does not lock.
    let syncsEnded = Atomic<Int>(0)
    /// How many syncs succeeded.
    let syncs = Atomic<Int>(0)

    init(log: any EventLog, metrics: StoreMetrics, synced: @escaping @Sendable () -> Void) {
        self.log = log
        self.metrics = metrics
        self.state = Mutex(State(pendingStart: log.durableEnd, durableEnd: log.durableEnd))
        self.synced = synced
    }

    /// Where the next lines handed over will go in the file (after a failure, until `resume`, the
    /// end of the lines that failed).
    var end: Int64 {
        state.withLock { $0.pendingStart + Int64($0.pending.reduce(0) { $0 + $1.count }) }
    }

    /// Hands over `lines`, `count` of them, to be written after those handed over before. Fails, taking nothing,
    /// while a failure waits for `resume(after:)`.
    ///
    /// With `inline`, when the loop is not running, the caller runs it: `append` returns once the
    /// lines are durable or failed, without calling `synced`. Only for a caller that would
    /// otherwise just wait for this sync (see `EventStore.drain`).
    func append(_ lines: [UInt8], count: Int, inline: Bool = false) throws(Failure) {
        let start = try state.withLock { state throws(Failure) -> Bool in
            if let failure = state.failure { throw failure }
            guard !state.isClosed else {
                let end = state.pendingStart
                throw Failure(start: end, end: end, error: LogError(.unusable, path: log.path, message: "the log is closed"))
            }
            state.pending.append(lines)
            state.pendingCount += count
            defer { state.isRunning = true }
            return !state.isRunning
        }
        guard start else { return }
        if inline {
            run(notifying: false)
        } else {
            queue.async { self.run(notifying: true) }
        }
    }

    /// How far the file is durable, and the failure that stopped the syncer, if any.
    var progress: (durableEnd: Int64, failure: Failure?) {
        state.withLock { ($0.durableEnd, $0.failure) }
    }

    /// Whether writes can succeed: the last write and sync did (or none was made), or why not.
    /// A lock the syncer takes once per sync anyway; nothing is added to its path.
    var health: StoreHealth {
        state.withLock { state in
            if let error = state.lastError { return state.isUnusable ? .unusable(error) : .failing(error) }
            return state.isClosed ? .closed : .ok
        }
    }

    /// Takes lines again after `failure`, from where it cut the file back.
    func resume(after failure: Failure) {
        state.withLock { state in
            state.failure = nil
            state.pending = []
            state.pendingCount = 0
            state.pendingStart = failure.start
        }
    }

    /// Moves on to `end`, past lines another process appended to a shared log (nothing is
    /// handed over meanwhile: the committer takes them in between its batches).
    func advance(to end: Int64) {
        state.withLock { state in
            state.pendingStart = end
            state.durableEnd = end
        }
    }

    /// Waits until the loop has ended (nothing is handed over, or a failure stopped it). An inline
    /// loop has ended before its `append` returns.
    func waitUntilStopped() {
        queue.sync {}
    }

    /// Waits for the loop to end, then closes the log (releasing its lock); takes no lines after.
    func close() {
        state.withLock { $0.isClosed = true }
        waitUntilStopped()
        log.close()
    }

    /// Writes and syncs until nothing is handed over; with `notifying`, calls `synced` after each sync.
    private func run(notifying: Bool) {
        while true {
            let taken = state.withLock { state -> (lines: [[UInt8]], count: Int, start: Int64)? in
                guard !state.pending.isEmpty, state.failure == nil else {
                    state.isRunning = false
                    return nil
                }
                defer {
                    state.pendingStart += Int64(state.pending.reduce(0) { $0 + $1.count })
                    state.pending = []
                    state.pendingCount = 0
                }
                return (state.pending, state.pendingCount, state.pendingStart)
            }
            guard let (lines, count, start) = taken else { return }
            var bytes = lines[0]
            for more in lines.dropFirst() { bytes.append(contentsOf: more) }
            let began = ContinuousClock.now
            do throws(LogError) {
                let end = try bytes.withBytes { lines throws(LogError) in try log.appendDurably(lines, at: start) }
                metrics.syncDuration.record(ContinuousClock.now - began)
                metrics.linesPerSync.record(count)
                metrics.appended.increment(by: count)
                syncs.add(1, ordering: .relaxed)
                state.withLock { state in
                    state.durableEnd = end
                    state.lastError = nil
                }
            } catch {
                // Read here, on the queue that appends: the log's own flag is not shared.
                let isUnusable = log.isUnusable
                metrics.writeFailures.increment()
                state.withLock { state in
                    state.failure = Failure(start: start, end: start + Int64(bytes.count), error: error)
                    state.pending = []
                    state.pendingCount = 0
                    state.isRunning = false
                    // The failure that made the file unusable stays the reason: later ones only repeat it.
                    if !state.isUnusable { state.lastError = error }
                    state.isUnusable = isUnusable
                }
                syncsEnded.add(1, ordering: .relaxed)
                if notifying { synced() }
                return
            }
            syncsEnded.add(1, ordering: .relaxed)
            if notifying { synced() }
        }
    }
}

