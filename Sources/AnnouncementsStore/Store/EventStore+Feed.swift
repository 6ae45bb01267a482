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
            /// When the wait ends even without the event (nil: never).
            var deadline: ContinuousClock.Instant?
            var continuation: CheckedContinuation<Void, Never>
        }

        private struct State {
            var nextID = 0
            var waiting: [Int: Waiting] = [:]
            /// Whether a sweep of the waits that have a deadline is under way (one for them all).
            var isSweeping = false
        }

        /// The longest a sweep sleeps: a wait with a deadline before the one it sleeps toward (a
        /// shorter wait, made meanwhile) ends at most this late.
        static let sweepStep = Duration.milliseconds(100)

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

        /// Returns once `current()` is above `seq`, at `deadline` (when there is one), or when the
        /// task is cancelled. The waits with a deadline share one sweep that ends them (rather
        /// than a timer and a task each: a write sent on to another node waits here).
        func wait(after seq: Int, until deadline: ContinuousClock.Instant? = nil, current: () -> Int) async {
            let id = state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    // Checked under the lock that `published` takes, so no event slips between.
                    let (resumeNow, sweepToward) = state.withLock { state -> (Bool, ContinuousClock.Instant?) in
                        if current() > seq || Task.isCancelled || deadline.map({ $0 <= .now }) == true { return (true, nil) }
                        state.waiting[id] = Waiting(after: seq, deadline: deadline, continuation: continuation)
                        guard let deadline, !state.isSweeping else { return (false, nil) }
                        state.isSweeping = true
                        return (false, deadline)
                    }
                    if resumeNow { continuation.resume() }
                    if let sweepToward { Task { await self.sweep(toward: sweepToward) } }
                }
            } onCancel: {
                state.withLock { $0.waiting.removeValue(forKey: id) }?.continuation.resume()
            }
        }

        /// Ends the waits whose deadline has come, sleeping toward the nearest (`next` first; at
        /// most `sweepStep` at a time), until no wait has one.
        private func sweep(toward next: ContinuousClock.Instant) async {
            var next = next
            while true {
                try? await Task.sleep(until: min(next, .now + Self.sweepStep), clock: .continuous)
                let now = ContinuousClock.now
                let (ended, nearest) = state.withLock { state -> ([CheckedContinuation<Void, Never>], ContinuousClock.Instant?) in
                    var ended: [CheckedContinuation<Void, Never>] = []
                    var nearest: ContinuousClock.Instant?
                    for (id, waiting) in state.waiting {
                        guard let deadline = waiting.deadline else { continue }
                        if deadline <= now {
                            ended.append(waiting.continuation)
                            state.waiting[id] = nil
                        } else {
                            nearest = min(nearest ?? deadline, deadline)
                        }
                    }
                    if nearest == nil { state.isSweeping = false }
                    return (ended, nearest)
                }
                for continuation in ended { continuation.resume() }
                guard let nearest else { return }
                next = nearest
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
