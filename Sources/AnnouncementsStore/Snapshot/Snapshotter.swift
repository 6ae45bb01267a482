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

/// Writes a store's snapshots one at a time on a thread of its own (an `IdleWorker`), so that
/// writers never wait for one: the committer hands over the state (values, taken in a moment) and
/// goes on. A snapshot that cannot be written is a warning, never a failed write.
///
/// The thread is not one of Dispatch's: a snapshot of a large state keeps a core busy for seconds,
/// and Dispatch's few threads also run Swift concurrency's tasks (the HTTP handlers). It runs at
/// normal priority, not at the lowest: at the lowest, a busy machine could starve it indefinitely,
/// leaving start-up to replay ever more of the log and shutdown to wait for it.
final class Snapshotter: Sendable {
    let logPath: String
    let logger: Logger
    private let schedule: Mutex<SnapshotSchedule>
    private let worker = IdleWorker(lowersPriority: false)
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    /// Called on the worker's thread before each write (tests hold a write here).
    let beforeWrite: (@Sendable () -> Void)?
    /// Counts the snapshots that could not be written.
    private let failures: Counter

    init(logPath: String, policy: SnapshotPolicy, loadedSeq: Int, loadedWithSearch: Bool = false, logger: Logger, failures: Counter, beforeWrite: (@Sendable () -> Void)? = nil) {
        self.logPath = logPath
        self.logger = logger
        self.failures = failures
        self.origin = clock.now
        self.schedule = Mutex(SnapshotSchedule(policy: policy, loadedSeq: loadedSeq, withSearch: loadedWithSearch, now: 0))
        self.beforeWrite = beforeWrite
    }

    private var now: Double { (clock.now - origin).seconds }

    /// The seq the newest snapshot beside the log covers (written, or loaded at start-up); 0 for
    /// none (none yet, or deleted by an erasure).
    var writtenSeq: Int {
        schedule.withLock { $0.writtenSeq }
    }

    /// Called as each write batch publishes `model`: when a snapshot of it is due (by its seq and
    /// how many announcements it holds), takes the state with `capture` and writes it in the background.
    func published(_ model: ReadModel, capture: () -> SnapshotContents) {
        guard schedule.withLock({ $0.takePeriodic(seq: model.seq, count: model.count, now: now) }) else { return }
        let contents = capture()
        worker.async { self.write(contents) }
    }

    /// Writes `contents`, if they are newer than the newest snapshot, after any write in progress;
    /// returns once it is written (or has failed). For the store's close, on the committer's thread.
    func writeFinal(_ contents: SnapshotContents) {
        let done = DispatchSemaphore(value: 0)
        // Queued behind a write in progress, the decision waits for that write's outcome.
        worker.async {
            // A stop does not wait for a first build of the index still under way.
            let withSearch = contents.search?.wait(timeout: .seconds(2)) != nil
            if self.schedule.withLock({ $0.takeFinal(seq: contents.model.seq, withSearch: withSearch) }) { self.write(contents) }
            done.signal()
        }
        done.wait()
    }

    /// After an erasure: deletes the snapshot beside the log (it may hold the erased texts), once
    /// any write in progress has finished, and returns once it is gone; snapshots of states from
    /// before the erasure that were queued meanwhile are not written.
    /// `erasedCount` is the number of erased announcements in the state after the erasure.
    /// Returns what could not be deleted (see `delete(besideLog:logger:)`).
    func erased(count erasedCount: Int) -> [String] {
        let done = DispatchSemaphore(value: 0)
        let undeleted = Mutex<[String]>([])
        worker.async {
            self.schedule.withLock { $0.erased(count: erasedCount) }
            let left = Self.delete(besideLog: self.logPath, logger: self.logger)
            undeleted.withLock { $0 = left }
            done.signal()
        }
        done.wait()
        return undeleted.withLock { $0 }
    }

    /// Deletes the snapshot beside the log at `logPath`, and a partial one (a store with snapshots
    /// off may have one left from before). Returns each that is still there, with why it could not
    /// be deleted (`path: reason`).
    static func delete(besideLog logPath: String, logger: Logger) -> [String] {
        var undeleted: [String] = []
        for path in [SnapshotFile.path(forLog: logPath), SnapshotFile.partialPath(forLog: logPath)] {
            guard unlink(path) != 0, errno != ENOENT else { continue }
            let reason = String(cString: strerror(errno))
            logger.error("cannot delete the snapshot after an erasure: delete it by hand, it may hold the erased texts", metadata: ["snapshot.path": "\(path)", "error": "\(reason)"])
            undeleted.append("\(path): \(reason)")
        }
        return undeleted
    }

    /// Waits for the writes queued so far (for tests).
    func waitUntilWritten() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            worker.async { continuation.resume() }
        }
    }

    private func write(_ contents: SnapshotContents) {
        // A state captured before an erasure holds what it erased.
        guard contents.model.erased.count >= schedule.withLock({ $0.erasedCount }) else {
            schedule.withLock { $0.finished(seq: contents.model.seq, written: false) }
            return
        }
        beforeWrite?()
        let seq = contents.model.seq
        let withSearch = contents.search?.wait() != nil
        let start = clock.now
        do throws(LogError) {
            let tag = try contents.write(besideLog: logPath, keepingFree: schedule.withLock { $0.policy.keepFreeBytes })
            schedule.withLock { $0.finished(seq: seq, written: true, withSearch: withSearch) }
            logger.info("wrote a snapshot", metadata: [
                "snapshot.path": "\(SnapshotFile.path(forLog: logPath))", "event.seq": "\(tag.seq)",
                "snapshot.seconds": "\((clock.now - start).seconds)",
            ])
            // The head record follows the snapshots too, not only the opens and stops: after a
            // crash, a log cut back before the last snapshot's line is refused even with the
            // snapshot gone.
            HeadRecord.record(LogHead(seq: tag.seq, hash: tag.hash), besideLog: logPath, logger: logger)
        } catch {
            schedule.withLock { $0.finished(seq: seq, written: false) }
            failures.increment()
            logger.warning("cannot write a snapshot; the log is unaffected, and start-up replays more of it", metadata: [
                "snapshot.path": "\(SnapshotFile.path(forLog: logPath))", "event.seq": "\(seq)", "error": "\(error)",
            ])
        }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
