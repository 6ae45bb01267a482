import AnnouncementsDomain

/// How a replay used the snapshot beside the log.
public struct SnapshotUse: Sendable, Hashable {
    /// The seq of the line the snapshot covered last, when one was used.
    public var seq: Int?
    /// How many lines were replayed after the snapshot (all of them when none was used).
    public var tail: Int
    /// Why the snapshot was not used (`missing`, `stale`, `corrupt`, `foreign version`, `unreadable`); nil when it was.
    public var reason: String?
    /// The reason in words, naming what is wrong.
    public var problem: String?
    /// Whether the lines after the snapshot erase an announcement: the snapshot was taken before
    /// that erasure and may hold its texts (a copy the erasure could not delete, or one beside
    /// another path to the same log). The state is right either way; the file must go.
    public var predatesErasure = false

    /// Whether a snapshot was used.
    public var isUsed: Bool { seq != nil }
}

extension LogReader {
    /// Rebuilds the state as `replay(indexing:)` does, starting from the snapshot beside the log
    /// when the log still holds the line it covers last, and replaying only the lines after that
    /// line. When there is no usable snapshot, replays the whole log and says why in the result:
    /// the state is the same either way (a snapshot can make this faster, never different).
    /// The result has a title index when it came from a snapshot (`ReadModel.buildTitleIndex()`
    /// builds one otherwise, when it is wanted).
    ///
    /// With `chainCheck` on (a server's start-up), the chain is followed from the snapshot's line
    /// (or through the whole log), and a log that no longer holds what the snapshot covers (cut
    /// back, emptied, rewritten) is refused rather than replayed: the snapshot may be the only copy
    /// of what it lost (see `SnapshotProblem.refusal`).
    public func replayUsingSnapshot(
        indexing: Bool = false,
        chainCheck: ChainCheck = .off,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws(LogError) -> (replay: Replay, snapshot: SnapshotUse) {
        let problem: SnapshotProblem
        let loaded: Result<Snapshot, SnapshotProblem>
        do throws(SnapshotProblem) {
            loaded = .success(try Snapshot.load(besideLog: path))
        } catch {
            loaded = .failure(error)
        }
        switch loaded {
        case .success(let snapshot):
            if let (replay, tail) = try replay(continuing: snapshot, indexing: indexing, chainCheck: chainCheck, progress: progress) {
                var use = SnapshotUse(seq: snapshot.tag.seq, tail: tail)
                use.predatesErasure = replay.model.erased.count > snapshot.state.model.erased.count
                return (replay, use)
            }
            problem = .stale("line \(snapshot.tag.seq + 1), the first after the snapshot, does not chain to the line the snapshot covers last (its prev differs): the log was rewritten")
        case .failure(let error):
            problem = error
        }
        if chainCheck != .off, let refusal = problem.refusal(logPath: path) { throw refusal }
        let replay = try replay(indexing: indexing, chainCheck: chainCheck, progress: progress)
        return (replay, SnapshotUse(seq: nil, tail: replay.model.seq, reason: problem.reason, problem: problem.description))
    }
}
