@testable import AnnouncementsClient
import AnnouncementsDomain
import Foundation
import Synchronization
import Testing

/// The feed read as a stream: only as fast as it is iterated, each event once, and a reconnection
/// that waits for a node behind.
@Suite struct FeedStreamTests {
    // The limit stops a hang only: alone it takes about 6 s, but run beside every other suite in
    // one process on 2 cores it took 108 to 120 s (a run beside busy loops passed 2 minutes).
    @Test("a consumer that falls behind holds a megabyte or two of the stream (the connection is paused), not the log, and every event still comes once, in order", .timeLimit(.minutes(6)))
    func pausedWhileTheConsumerIsBehind() async throws {
        // About 7 MB of full lines for an auditor, which the server writes a page of 1,000 events
        // (0.7 MB) at a time. Paused, the client holds `highWater` (1 MB) and what was on its way
        // when it paused (at most about a page); without the pause, all of it.
        let body = "<p>" + String(repeating: "x", count: 500) + "</p>"
        let count = 10_000
        try await withServer(seed: (1...count).map { AnnouncementDraft(title: "Announcement \($0)", body: body) }) { url in
            let auditor = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let reader = FeedReader(client: auditor, after: 0, retryDelay: .seconds(1), idleTimeout: .seconds(60), pollInterval: nil)
            #expect(try await reader.next()?.seq == 1)
            // The consumer is busy until the stream has held still for half a second past the
            // high-water mark (ten seconds at most, on a busy machine); the server would send the
            // rest meanwhile.
            var (held, still) = (0, 0)
            for _ in 0..<100 where still < 5 {
                try await Task.sleep(for: .milliseconds(100))
                let now = await reader.bufferedBytes
                still = now == held && now > FeedStream.highWater ? still + 1 : 0
                held = max(held, now)
            }
            #expect(held > FeedStream.highWater, "the stream sent no more than a megabyte in ten seconds: \(held) bytes")
            #expect(held <= 3 << 20, "\(held) bytes held for a consumer that fell behind")
            var seqs = [1]
            while seqs.count < count, let event = try await reader.next() { seqs.append(event.seq) }
            #expect(seqs == Array(1...count))
        }
    }

    @Test("a stream that sends earlier events again delivers each once; each reconnection after an event sends Min-Seq")
    func replayedEventsOnce() async throws {
        fakeReplayingResumes.withLock { $0 = [] }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("replaying"), timeout: testTimeout)
            var seqs: [Int] = []
            for try await event in client.events(after: 0, retryDelay: .milliseconds(100), pollInterval: nil) {
                seqs.append(event.seq)
                if seqs.count == 3 { break }
            }
            #expect(seqs == [1, 2, 3])
        }
        #expect(Array(fakeReplayingResumes.withLock { $0 }.prefix(3)) == ["0 -", "1 1", "2 2"])
    }

    @Test("once the feed ends with an error, it stays ended: the next call is nil, not another connection")
    func endedStaysEnded() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("portal"), timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: nil)
            await #expect(throws: ClientError.self) { try await reader.next() }
            let after = try await reader.next()
            #expect(after == nil)
        }
    }

    @Test("tasks that share one feed take turns: each event goes to one of them, none is lost", .timeLimit(.minutes(2)), arguments: [nil, Duration.milliseconds(50)])
    func sharedBetweenTasks(pollInterval: Duration?) async throws {
        try await withServer(seed: (1...60).map { AnnouncementDraft(title: "Announcement \($0)") }) { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            let seqs = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        var seqs: [Int] = []
                        for _ in 0..<20 { if let event = try await reader.next() { seqs.append(event.seq) } }
                        return seqs
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(seqs.sorted() == Array(1...60))
        }
    }

    @Test("a task sharing the feed that is cancelled returns nil at once, waiting for its turn or holding it; the feed goes on for the others", .timeLimit(.minutes(3)), arguments: [nil, Duration.milliseconds(100)] as [Duration?])
    func cancelledSharer(pollInterval: Duration?) async throws {
        try await withServer(seed: (1...2).map { AnnouncementDraft(title: "Announcement \($0)") }) { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            // Caught up: the first task waits for an event, holding the turn; the second for its turn.
            // Through the sequence `events` returns, each task with its own iterator of it.
            let feed = client.events(after: 2, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            let holder = Task {
                var events = feed.makeAsyncIterator()
                return try await events.next()
            }
            try await Task.sleep(for: .milliseconds(300))
            let waiterEnded = Mutex(false)
            let waiter = Task {
                defer { waiterEnded.withLock { $0 = true } }
                var events = feed.makeAsyncIterator()
                return try await events.next()
            }
            try await Task.sleep(for: .milliseconds(300))
            waiter.cancel()
            let clock = ContinuousClock()
            let cancelled = clock.now
            while !waiterEnded.withLock({ $0 }), clock.now - cancelled < .seconds(10) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(waiterEnded.withLock { $0 }, "the cancelled task still waits for its turn")
            holder.cancel()
            #expect(try await holder.value == nil)
            #expect(try await waiter.value == nil)
            // A task that shares the feed still gets the next event.
            _ = try await client.create(title: "After", body: nil)
            var events = feed.makeAsyncIterator()
            #expect(try await events.next()?.seq == 3)
        }
    }

    @Test("a task cancelled while events it received wait to be read gets nil, not them: the next task reading the feed gets them, in order", arguments: [nil, Duration.milliseconds(50)] as [Duration?])
    func cancelledWithEventsReceived(pollInterval: Duration?) async throws {
        try await withServer(seed: (1...3).map { AnnouncementDraft(title: "Announcement \($0)") }) { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            // The page (or the stream's first read) brings all three; the task reads one, then is cancelled.
            let (first, afterCancel) = try await Task {
                let first = try await reader.next()
                withUnsafeCurrentTask { $0?.cancel() }
                return (first?.seq, try await reader.next()?.seq)
            }.value
            #expect(first == 1)
            #expect(afterCancel == nil, "a cancelled task gets nil at once, not the next event it had received")
            // (A fourth, so that a reader given 2 by the cancelled task does not wait for ever.)
            _ = try await client.create(title: "Four", body: nil)
            var seqs: [Int] = []
            for _ in 0..<2 { if let event = try await reader.next() { seqs.append(event.seq) } }
            #expect(seqs == [2, 3], "the next task gets them")
        }
    }

    @Test("signing out (token = nil) reaches an open feed: what it received under the auditor's token is not delivered; it goes on from the last event delivered, in the public form", arguments: [nil, Duration.milliseconds(50)] as [Duration?])
    func signingOutReachesTheFeed(pollInterval: Duration?) async throws {
        try await withServer(seed: (1...3).map { AnnouncementDraft(title: "Announcement \($0)") }) { url in
            let client = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            // The page (or the stream's first read) brings all three, as full lines.
            let first = try #require(try await reader.next())
            #expect(first.seq == 1 && first.line.contains("Announcement 1"), "the auditor's full line: \(first.line)")
            client.token = nil
            var rest: [FeedEvent] = []
            for _ in 0..<2 { if let event = try await reader.next() { rest.append(event) } }
            #expect(rest.map(\.seq) == [2, 3])
            for event in rest {
                #expect(!event.line.contains("Announcement") && !event.line.contains(#""by""#), "the public form: \(event.line)")
            }
        }
    }

    @Test("setting the token closes an open feed stream at once, not at its next chunk: the connection opened with the auditor's token ends while no event comes, and the feed goes on in the public form")
    func tokenClosesTheStream() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: nil)
            for _ in 0..<3 { _ = try await reader.next() }
            let auditors = try #require(await reader.openStream)
            // Waiting for the next chunk of the open, idle stream (the next heartbeat is 15 s away).
            let waiting = Task { try await reader.next() }
            try await Task.sleep(for: .milliseconds(200))
            #expect(!auditors.hasEnded)
            client.token = nil
            var replaced = false
            for _ in 0..<100 where !replaced {
                try await Task.sleep(for: .milliseconds(50))
                replaced = await reader.openStream.map { $0 !== auditors && !$0.hasEnded } == true
            }
            #expect(auditors.hasEnded, "the auditor's stream is closed, with no event to carry the change")
            #expect(replaced, "and another is open, asked for without the token, within 5 s")
            _ = try await AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout).create(title: "Four", body: nil)
            let event = try #require(try await waiting.value)
            #expect(event.seq == 4 && !event.line.contains("Four"), "the public form: \(event.line)")
        }
    }

    @Test("the client's statistics count the event stream, as they count pages: a request answered, and the bytes it brought", arguments: [nil, Duration.milliseconds(50)] as [Duration?])
    func streamInStatistics(pollInterval: Duration?) async throws {
        try await withServer(seed: (1...3).map { AnnouncementDraft(title: "Announcement \($0)") }) { url in
            let client = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            var lines = 0
            for _ in 0..<3 { lines += try #require(try await reader.next()).line.utf8.count }
            let statistics = client.statistics
            #expect(statistics.requests >= 1, "\(statistics)")
            #expect(statistics.bytesReceived >= lines, "\(statistics), \(lines) bytes of lines")
        }
    }

    @Test("a stream the server refuses (a token it does not know: 401) is a request answered in the statistics, with its body's bytes, as a refused page is", arguments: [nil, Duration.milliseconds(50)] as [Duration?])
    func refusedStreamInStatistics(pollInterval: Duration?) async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "not-a-token", timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: pollInterval)
            await #expect { _ = try await reader.next() } throws: { ($0 as? ClientError)?.statusCode == 401 }
            let statistics = client.statistics
            #expect(statistics.requests == 1, "\(statistics)")
            #expect(statistics.bytesReceived > 20, "the API's error body: \(statistics)")
        }
    }

    @Test("polling: after a page that reached the end of the log (its Log-Seq), the next page waits the poll interval, not asked for at once to come back empty")
    func pollWaitsAfterTheEnd() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            let reader = FeedReader(client: client, after: 0, retryDelay: .milliseconds(100), idleTimeout: .seconds(60), pollInterval: .seconds(30))
            var seqs: [Int] = []
            for _ in 0..<3 { if let event = try await reader.next() { seqs.append(event.seq) } }
            #expect(seqs == [1, 2, 3])
            #expect(client.statistics.requests == 1)
            let next = Task { try await reader.next() }
            try await Task.sleep(for: .seconds(1))
            #expect(client.statistics.requests == 1, "no request for a page that would come back empty")
            next.cancel()
            #expect(try await next.value == nil)
        }
    }
}
