import AnnouncementsDomain
import Logging

/// A store's snapshots (see `Snapshot`): loaded when the store opens, taken as write batches are
/// published and when the store closes, written by the `Snapshotter` in the background.
extension EventStore {
    /// The state from the snapshot beside the log and the lines after it, or from the whole log
    /// when no snapshot is usable, with a warning naming why (except for a new, empty log).
    /// A log that no longer holds what the snapshot covers is refused (see `SnapshotProblem.refusal`);
    /// the chain is followed as `chainCheck` says.
    static func replayUsingSnapshot(path: String, logIsEmpty: Bool, chainCheck: ChainCheck, logger: Logger) throws(LogError) -> (replay: Replay, snapshotSeq: Int) {
        let clock = ContinuousClock()
        let start = clock.now
        let (replay, use) = try LogReader(path: path).replayUsingSnapshot(indexing: true, chainCheck: chainCheck)
        let seconds = "\((clock.now - start).seconds)"
        let snapshotPath = SnapshotFile.path(forLog: path)
        if let seq = use.seq {
            logger.info("loaded the snapshot and replayed the lines after it", metadata: [
                "snapshot.path": "\(snapshotPath)", "snapshot.seq": "\(seq)", "log.lines_replayed": "\(use.tail)", "seconds": "\(seconds)",
            ])
            guard use.predatesErasure else { return (replay, seq) }
            // The next one is written as after a full replay (at once when the log holds
            // `every_events`, else at the next period or at close): the state holds no erased text.
            deleteSnapshotFromBeforeErasure(besideLog: path, logger: logger)
            return (replay, 0)
        }
        let problem = use.problem ?? "unknown"
        if use.reason == "missing", logIsEmpty {
            logger.debug("no snapshot for a new log", metadata: ["snapshot.path": "\(snapshotPath)"])
        } else {
            logger.warning("not using the snapshot (\(problem)); replayed the whole log", metadata: [
                "snapshot.path": "\(snapshotPath)", "snapshot.reason": "\(use.reason ?? "unknown")",
                "log.lines_replayed": "\(use.tail)", "seconds": "\(seconds)",
            ])
        }
        return (replay, 0)
    }

    /// Deletes the snapshot beside the log, taken before an erasure in the lines after it: the
    /// erasure's own deletion of it failed, or went to another path to this log, or a copy was
    /// put back. It may hold the erased texts, whether this start reads it or not.
    static func deleteSnapshotFromBeforeErasure(besideLog path: String, logger: Logger) {
        guard Snapshotter.delete(besideLog: path, logger: logger).isEmpty else { return }
        logger.notice("deleted the snapshot: it was taken before an erasure in the lines after it, and may hold the erased texts", metadata: ["snapshot.path": "\(SnapshotFile.path(forLog: path))"])
    }

    /// The state at the last published batch, for a snapshot: call on the committer's thread (or
    /// before it starts), where `committer` and `index` are at the same seq as `model`.
    func snapshotContents(of model: ReadModel) -> SnapshotContents {
        SnapshotContents(model: model, lastHash: committer.lastHash, index: index.withLock { $0 }, keys: committer.keys, search: search.copy(at: model.seq))
    }

    /// Records the head beside a file log (`HeadRecord`), as the store opens and closes it.
    func recordHead() {
        guard log is FileLog else { return }
        HeadRecord.record(head, besideLog: path, logger: logger)
    }

    /// Waits for the snapshots being written (for tests).
    func waitForSnapshots() async {
        await snapshotter?.waitUntilWritten()
    }
}
