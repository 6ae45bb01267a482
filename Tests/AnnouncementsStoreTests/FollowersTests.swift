import Synchronization
import Testing
@testable import AnnouncementsStore

/// The readers waiting for the store's next events (`EventStore.Followers`): woken by what is
/// published, and those with a deadline ended by one sweep for them all.
@Suite struct FollowersTests {
    /// Raised once a wait has returned.
    final class Flag: Sendable {
        private let raised = Atomic(false)
        func raise() { raised.store(true, ordering: .sequentiallyConsistent) }
        var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }
    }

    /// The seq the waits compare with, which the test moves on.
    final class Seq: Sendable {
        private let value = Atomic(0)
        var current: Int { value.load(ordering: .sequentiallyConsistent) }
        func set(_ seq: Int) { value.store(seq, ordering: .sequentiallyConsistent) }
    }

    /// Runs `wait` in a task; the returned flag is raised when it returns.
    private func waiting(_ wait: @escaping @Sendable () async -> Void) -> (Task<Void, Never>, Flag) {
        let done = Flag()
        let task = Task {
            await wait()
            done.raise()
        }
        return (task, done)
    }

    @Test("a wait with a deadline ends at it though nothing came, and one without a deadline waits on until an event after its seq is published")
    func deadline() async throws {
        let followers = EventStore.Followers()
        let seq = Seq()
        let start = ContinuousClock.now
        let (timed, timedDone) = waiting { await followers.wait(after: 0, until: start + .milliseconds(300)) { seq.current } }
        let (open, openDone) = waiting { await followers.wait(after: 0) { seq.current } }
        await timed.value
        #expect(ContinuousClock.now - start >= .milliseconds(300), "not before its deadline")
        #expect(timedDone.isRaised)
        try await Task.sleep(for: .milliseconds(200))
        #expect(!openDone.isRaised, "no deadline: still waiting")
        seq.set(1)
        followers.published(1)
        await open.value
        #expect(openDone.isRaised)
    }

    @Test("a wait whose deadline comes before the one the sweep sleeps toward ends by its own; an event ends a wait before its deadline; a deadline already past returns at once")
    func shorterDeadline() async throws {
        let followers = EventStore.Followers()
        let seq = Seq()
        let start = ContinuousClock.now
        // The bounds below leave room for a starved pool (the whole suite beside two busy cores
        // held every task back 20 s once, and this wait 61 s another time): a sweep that slept
        // toward the long deadline would end the short wait only at 600 s. (An event ends the
        // long wait below.)
        let (long, _) = waiting { await followers.wait(after: 0, until: start + .seconds(600)) { seq.current } }
        try await Task.sleep(for: .milliseconds(50))
        await followers.wait(after: 0, until: .now + .milliseconds(200)) { seq.current }
        #expect(ContinuousClock.now - start < .seconds(300), "ended by the sweep, not with the 600 s wait")
        await followers.wait(after: 0, until: .now - .seconds(1)) { seq.current }
        seq.set(1)
        followers.published(1)
        await long.value
        #expect(ContinuousClock.now - start < .seconds(100), "the event ended it, not its deadline")
    }
}
