import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// The syncer's decisions, without a log or a thread: every transition of `SyncQueue`.
@Suite struct SyncQueueTests {
    /// The loop's next append, which must be there.
    func take(_ queue: inout SyncQueue) throws -> SyncQueue.Append {
        let append = queue.next()
        return try #require(append)
    }

    let error = LogError(.writeFailed, path: "log.jsonl", message: "no space left on device")

    /// A queue whose first append failed with `error` (leaving the log `unusable` or not).
    func failedQueue(unusable: Bool) throws -> SyncQueue {
        var queue = SyncQueue(path: "log.jsonl", durableEnd: 0)
        _ = try queue.hand(Array("a\n".utf8), count: 1)
        queue.failed(try take(&queue), with: error, unusable: unusable)
        return queue
    }

    @Test("the first lines handed over start the loop; lines handed over while it runs go out together in its next append")
    func groupCommit() throws {
        var queue = SyncQueue(path: "log.jsonl", durableEnd: 10)
        let starts = try queue.hand(Array("one\n".utf8), count: 1)
        #expect(starts, "nothing runs: the caller starts the loop")
        let first = try take(&queue)
        #expect(first.bytes == Array("one\n".utf8) && first.count == 1 && first.start == 10)
        let startsAgain = try queue.hand(Array("two\n".utf8), count: 1)
        #expect(!startsAgain, "it runs: no second loop")
        _ = try queue.hand(Array("three\nfour\n".utf8), count: 2)
        #expect(queue.end == 29)
        queue.appended(upTo: 14)
        #expect(queue.durableEnd == 14)
        let second = try take(&queue)
        #expect(second.bytes == Array("two\nthree\nfour\n".utf8) && second.count == 3 && second.start == 14)
        queue.appended(upTo: 29)
        let nothing = queue.next()
        #expect(nothing == nil, "nothing left: the loop ends")
        #expect(!queue.isRunning)
        #expect(queue.health == .ok)
        let restarts = try queue.hand(Array("five\n".utf8), count: 1)
        #expect(restarts, "ended: the next lines start it again")
    }

    @Test("a failed append drops what was handed over after it, refuses more until resumed, and the log goes on from where it was cut")
    func failure() throws {
        var queue = SyncQueue(path: "log.jsonl", durableEnd: 0)
        _ = try queue.hand(Array("good\n".utf8), count: 1)
        let good = try take(&queue)
        queue.appended(upTo: 5)
        _ = try queue.hand(Array("lost\n".utf8), count: 1)
        let lost = try take(&queue)
        _ = try queue.hand(Array("on top\n".utf8), count: 1)
        queue.failed(lost, with: error, unusable: false)
        #expect(good.start == 0)
        let failure = try #require(queue.failure)
        #expect(failure.start == 5 && failure.end == 10)
        let dropped = queue.next()
        #expect(dropped == nil, "the lines on top of the failed ones are dropped")
        #expect(queue.health == .failing(error))
        #expect(throws: SyncQueue.Failure.self) { try queue.hand(Array("refused\n".utf8), count: 1) }
        queue.resume(after: failure)
        #expect(queue.end == 5)
        let starts = try queue.hand(Array("again\n".utf8), count: 1)
        #expect(starts)
        let again = try take(&queue)
        #expect(again.start == 5)
        queue.appended(upTo: 11)
        #expect(queue.health == .ok, "an append that succeeds clears the failure's health")
    }

    @Test("a shared log that can append again (its writer connected again) clears the last failure's health, never an unusable log's")
    func writable() throws {
        var queue = try failedQueue(unusable: false)
        #expect(queue.health == .failing(error))
        queue.writable()
        #expect(queue.health == .ok)
        var unusable = try failedQueue(unusable: true)
        unusable.writable()
        #expect(unusable.health == .unusable(error))
    }

    @Test("the failure that made the log unusable stays the reason; later ones only repeat it")
    func unusable() throws {
        var queue = try failedQueue(unusable: true)
        #expect(queue.health == .unusable(error))
        queue.resume(after: try #require(queue.failure))
        _ = try queue.hand(Array("b\n".utf8), count: 1)
        let later = LogError(.unusable, path: "log.jsonl", message: "the log is unusable")
        queue.failed(try take(&queue), with: later, unusable: true)
        #expect(queue.health == .unusable(error))
    }

    @Test("closed: nothing more is taken; another process's lines move the end on")
    func closeAndAdvance() throws {
        var queue = SyncQueue(path: "log.jsonl", durableEnd: 0)
        queue.advance(to: 42)
        #expect(queue.end == 42 && queue.durableEnd == 42)
        queue.close()
        #expect(queue.health == .closed)
        #expect(throws: SyncQueue.Failure.self) { try queue.hand(Array("late\n".utf8), count: 1) }
    }
}
