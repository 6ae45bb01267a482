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
/// go, and how far the log is durable. Its decisions are `SyncQueue`'s (which lines go into an
/// append, what a failure stops); this is their driver.
final class LogSyncer: Sendable {
    /// Lines handed over and not yet durable: a write or a sync failed for `start..<end`.
    typealias Failure = SyncQueue.Failure

    private let log: any EventLog
    /// The queue, flagged while its health is `.ok`: what a health check reads on every core,
    /// where the lock is the one the syncer and the committer take for every write.
    private let state: FlaggedMutex<SyncQueue>
    private let queue = DispatchQueue(label: "announcements.sync")
    /// Called after each sync, failed or not (the committer's pipeline hears of it).
    private let synced: @Sendable () -> Void
    private let metrics: StoreMetrics
    /// How many syncs have ended, failed or not: a look that does not lock.
    let syncsEnded = Atomic<Int>(0)
    /// How many syncs succeeded.
    let syncs = Atomic<Int>(0)

    init(log: any EventLog, metrics: StoreMetrics, synced: @escaping @Sendable () -> Void) {
        self.log = log
        self.metrics = metrics
        self.state = FlaggedMutex(SyncQueue(path: log.path, durableEnd: log.durableEnd)) { $0.health.isOK }
        self.synced = synced
    }

    /// Where the next lines handed over will go in the file (after a failure, until `resume`, the
    /// end of the lines that failed).
    var end: Int64 {
        state.withLock { $0.end }
    }

    /// Hands over `lines`, `count` of them, to be written after those handed over before. Fails, taking nothing,
    /// while a failure waits for `resume(after:)`.
    ///
    /// With `inline`, when the loop is not running, the caller runs it: `append` returns once the
    /// lines are durable or failed, without calling `synced`. Only for a caller that would
    /// otherwise just wait for this sync (see `EventStore.drain`).
    func append(_ lines: [UInt8], count: Int, inline: Bool = false) throws(Failure) {
        guard try state.withLock({ state throws(Failure) in try state.hand(lines, count: count) }) else { return }
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
    /// While they can, nothing but the state's flag is read: no lock.
    var health: StoreHealth {
        state.flag ? .ok : state.withLock { $0.health }
    }

    /// The cause of the last failure is gone (see `SyncQueue.writable`).
    func writable() {
        state.withLock { $0.writable() }
    }

    /// Takes lines again after `failure`, from where it cut the file back.
    func resume(after failure: Failure) {
        state.withLock { $0.resume(after: failure) }
    }

    /// Moves on to `end`, past lines another process appended to a shared log (nothing is
    /// handed over meanwhile: the committer takes them in between its batches).
    func advance(to end: Int64) {
        state.withLock { $0.advance(to: end) }
    }

    /// Waits until the loop has ended (nothing is handed over, or a failure stopped it). An inline
    /// loop has ended before its `append` returns.
    func waitUntilStopped() {
        queue.sync {}
    }

    /// Waits for the loop to end, then closes the log (releasing its lock); takes no lines after.
    func close() {
        state.withLock { $0.close() }
        waitUntilStopped()
        log.close()
    }

    /// Writes and syncs until nothing is handed over; with `notifying`, calls `synced` after each sync.
    private func run(notifying: Bool) {
        while let append = state.withLock({ $0.next() }) {
            let began = ContinuousClock.now
            do throws(LogError) {
                let end = try append.bytes.withBytes { lines throws(LogError) in try log.appendDurably(lines, at: append.start) }
                metrics.syncDuration.record(ContinuousClock.now - began)
                metrics.linesPerSync.record(append.count)
                metrics.appended.increment(by: append.count)
                syncs.add(1, ordering: .relaxed)
                state.withLock { $0.appended(upTo: end) }
            } catch {
                // Read here, on the queue that appends: the log's own flag is not shared.
                let isUnusable = log.isUnusable
                metrics.writeFailures.increment()
                state.withLock { $0.failed(append, with: error, unusable: isUnusable) }
            }
            syncsEnded.add(1, ordering: .relaxed)
            if notifying { synced() }
        }
    }
}
