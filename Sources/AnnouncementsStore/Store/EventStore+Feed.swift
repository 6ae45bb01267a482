import AnnouncementsDomain
import Dispatch
import Synchronization

/// Following the log: a reader waits for events after the last one it has, then reads them back
/// with `eventLines(after:limit:)`. Waiting costs a writer nothing but one wake-up per batch, and a
/// reader holds no events in memory: however slow it is, it reads from the log at its own pace.
extension EventStore {
    /// How long a follower that has caught up lets new events gather before it reads again: it
    /// bounds each follower to a few reads a second however fast writers go, so that a hundred
    /// followers cost writers little, for at most this much added delay. While writers are busy
    /// (a read brings `busyRead` events or more) it waits `busyFollowerPause`: fewer, larger reads.
    public static let followerPause = Duration.milliseconds(50)
    public static let busyFollowerPause = Duration.milliseconds(200)
    static let busyRead = 100

    /// Readers waiting for events, each until the store has an event after its seq.
    final class Followers: Sendable {
        private struct Waiting {
            var after: Int
            var continuation: CheckedContinuation<Void, Never>
        }

        private struct State {
            var nextID = 0
            var waiting: [Int: Waiting] = [:]
        }

        private let state = Mutex(State())

        /// Wakes the readers waiting for events after a seq below `seq`. The committer calls this:
        /// the wake-ups (one per follower, a hundred or more) are made on another thread, so that
        /// they do not delay the writers the committer answers next.
        func published(_ seq: Int) {
            let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                guard !state.waiting.isEmpty else { return [] }
                let ready = state.waiting.filter { $0.value.after < seq }
                for id in ready.keys { state.waiting[id] = nil }
                return ready.values.map(\.continuation)
            }
            guard !woken.isEmpty else { return }
            DispatchQueue.global().async {
                for continuation in woken { continuation.resume() }
            }
        }

        /// Returns once `current()` is above `seq`, or when the task is cancelled.
        func wait(after seq: Int, current: () -> Int) async {
            let id = state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Checked under the lock that `published` takes, so no event slips between.
                    let resumeNow = state.withLock { state -> Bool in
                        if current() > seq || Task.isCancelled { return true }
                        state.waiting[id] = Waiting(after: seq, continuation: continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }

    /// What a follower gets from `followerLines(after:)`: the next lines, and whether they reach
    /// the end of the log as it is now.
    public struct FollowerRead: Sendable {
        public var lines: [ArraySlice<UInt8>]
        public var isCaughtUp: Bool

        /// How long to let events gather before the next read: nil while behind (read on at once).
        public var pause: Duration? {
            guard isCaughtUp else { return nil }
            return lines.count >= EventStore.busyRead ? EventStore.busyFollowerPause : EventStore.followerPause
        }
    }

    /// The durable lines after `seq`, to the end of the page of the log `seq` is in, for followers.
    ///
    /// Followers' reads run one at a time on `feedWorker`, a thread at the lowest CPU priority, so
    /// that however many followers there are they never take CPU time from writers, and they share
    /// what they read (see `FeedPages`): a hundred followers read each page of the log once.
    public func followerLines(after seq: Int) async throws(StoreError) -> FollowerRead {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<FollowerRead, StoreError>, Never>) in
            feedWorker.async {
                continuation.resume(returning: Result { () throws(StoreError) in
                    let lastSeq = self.index.withLock { $0.lastSeq }
                    let lines = try self.feedPages.withLock { pages throws(StoreError) in
                        try pages.lines(after: seq, lastSeq: lastSeq) { after, limit throws(StoreError) in
                            try self.readEventLines(after: after, limit: limit)
                        }
                    }
                    return FollowerRead(lines: lines, isCaughtUp: max(seq, 0) + lines.count >= lastSeq)
                })
            }
        }
        return try result.get()
    }

    /// Returns once the log has a durable event after `seq` (at once if it has one already), or when
    /// the calling task is cancelled.
    public func waitForEvents(after seq: Int) async {
        await followers.wait(after: seq) { index.withLock { $0.lastSeq } }
    }
}
