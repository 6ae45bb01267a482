import Dispatch
import Synchronization

/// Following the log: a reader waits for events after the last one it has, then reads them back
/// with `eventLines(after:limit:)`. Waiting costs a writer nothing but one wake-up per batch, and a
/// reader holds no events in memory: however slow it is, it reads from the log at its own pace.
extension EventStore {
    /// How long a follower that has caught up lets new events gather before it reads again: it
    /// bounds each follower to a few reads a second however fast writers go, so that a hundred
    /// followers cost writers little, for at most this much added delay.
    public static let followerPause = Duration.milliseconds(50)

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

        /// Wakes the readers waiting for events after a seq below `seq`.
        func published(_ seq: Int) {
            let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                let ready = state.waiting.filter { $0.value.after < seq }
                for id in ready.keys { state.waiting[id] = nil }
                return ready.values.map(\.continuation)
            }
            for continuation in woken { continuation.resume() }
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

    /// `eventLines(after:limit:)` for followers: run on one serial queue shared by all of them, off
    /// Swift's cooperative threads, so that followers' reads (however many) never hold up the
    /// tasks of writers and use at most one core between them.
    /// Followers that are caught up ask for the same events: the last page read is kept and
    /// handed to each of them (slices of one buffer) until the log grows.
    public func followerLines(after seq: Int) async throws(StoreError) -> [ArraySlice<UInt8>] {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[ArraySlice<UInt8>], StoreError>, Never>) in
            feedQueue.async {
                continuation.resume(returning: Result { () throws(StoreError) in
                    let lastSeq = self.index.withLock { $0.lastSeq }
                    if let page = self.lastFeedPage.withLock({ $0 }), page.after == seq, page.lastSeq == lastSeq {
                        return page.lines
                    }
                    let lines = try self.eventLines(after: seq, limit: Self.maxFeedPage)
                    self.lastFeedPage.withLock { $0 = FeedPage(after: seq, lastSeq: lastSeq, lines: lines) }
                    return lines
                })
            }
        }
        return try result.get()
    }

    /// A page of the feed as last read: the lines after `after` when the log ended at `lastSeq`.
    struct FeedPage: Sendable {
        var after: Int
        var lastSeq: Int
        var lines: [ArraySlice<UInt8>]
    }

    /// Returns once the log has a durable event after `seq` (at once if it has one already), or when
    /// the calling task is cancelled.
    public func waitForEvents(after seq: Int) async {
        await followers.wait(after: seq) { index.withLock { $0.lastSeq } }
    }
}
