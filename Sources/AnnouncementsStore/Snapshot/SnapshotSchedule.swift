import AnnouncementsDomain

/// When a store writes its next snapshot: the decisions alone, without threads, clocks or disks
/// (`Snapshotter` drives it, giving it the time).
///
/// One snapshot is written at a time. A periodic one is due once `everyEvents` events, or
/// `everySeconds` seconds with at least one event, have passed since the last one was taken (or
/// since the store opened).
///
/// Where the state held more announcements than `everyEvents` when the last was taken while the
/// store ran, the next by count waits for as many events as it held: writing a snapshot costs
/// about what taking in that many writes does, so that a large state's snapshots never cost more
/// than the writes between them (a state growing by writes alone is written at 100,000, 200,000,
/// 400,000… events, not at every 100,000 in full). The price: a crash may leave that many lines
/// for start-up to replay, not `everyEvents`. A store that opens counts from `everyEvents` again
/// until it takes one, so that restarts cannot put the next snapshot off and off.
///
/// The one at close is due whenever the state is newer than the newest snapshot, or as new but
/// without the search index the store now keeps (the snapshot written right after a start that
/// replayed the whole log, before the index was built). A snapshot that fails to be written
/// counts as taken for the timing (so a failing disk is not retried after every batch), but not
/// as written.
struct SnapshotSchedule: Sendable {
    let policy: SnapshotPolicy
    /// The seq the newest snapshot written (or loaded at start-up) covers; 0 for none.
    private(set) var writtenSeq: Int
    /// Whether that snapshot holds the search index.
    private(set) var writtenWithSearch: Bool
    /// The seq and time of the last snapshot taken (written or not), to time the next from.
    private(set) var takenSeq: Int
    private(set) var takenAt: Double
    /// The announcements the state held when the last snapshot was taken (0 until this store
    /// takes one): how many events the next one by count waits for, when more than `everyEvents`.
    private(set) var takenCount = 0
    /// Whether a snapshot is being written.
    private(set) var isWriting = false
    /// The erased announcements in the state of the last erasure: a state with fewer is from
    /// before it, and holds what it erased (never written).
    private(set) var erasedCount = 0

    /// A schedule for a store that opened at `now` with a snapshot covering `seq` (0: none).
    init(policy: SnapshotPolicy, loadedSeq seq: Int, withSearch: Bool = false, now: Double) {
        self.policy = policy
        self.writtenSeq = seq
        self.writtenWithSearch = withSearch
        self.takenSeq = seq
        self.takenAt = now
    }

    /// Whether to take a periodic snapshot of the state at `seq`, which holds `count`
    /// announcements, now; if so, it is marked as being written.
    mutating func takePeriodic(seq: Int, count: Int, now: Double) -> Bool {
        guard policy.isEnabled, !isWriting, seq > takenSeq else { return false }
        let byCount = policy.everyEvents.map { seq - takenSeq >= max($0, takenCount) } ?? false
        let byTime = policy.everySeconds.map { now - takenAt >= Double($0) } ?? false
        guard byCount || byTime else { return false }
        isWriting = true
        takenSeq = seq
        takenAt = now
        takenCount = count
        return true
    }

    /// Whether to write the state at `seq` (with the search index or not) as the store closes
    /// (after any write in progress ends). An empty log's state covers no line: there is none.
    mutating func takeFinal(seq: Int, withSearch: Bool = false) -> Bool {
        guard policy.isEnabled, seq > 0, seq > writtenSeq || (seq == writtenSeq && withSearch && !writtenWithSearch) else { return false }
        isWriting = true
        return true
    }

    /// Records an erasure, after which the state holds `count` erased announcements: the snapshot
    /// written before is deleted, so the next one is due as for a store without one (after the
    /// next write, once the log has `everyEvents` events): a crash meanwhile would replay the
    /// whole log.
    mutating func erased(count: Int) {
        erasedCount = max(erasedCount, count)
        writtenSeq = 0
        takenSeq = 0
    }

    /// Records the end of a write of the state at `seq`.
    mutating func finished(seq: Int, written: Bool, withSearch: Bool = false) {
        isWriting = false
        guard written, seq >= writtenSeq else { return }
        writtenSeq = seq
        writtenWithSearch = withSearch
    }
}
