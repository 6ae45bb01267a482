import Testing
@testable import AnnouncementsStore


/// The write path's decisions, without a disk or a thread: every transition of `CommitPipeline`,
/// and the hand-overs between threads each workload costs.
@Suite struct CommitPipelineTests {
    typealias Pipeline = CommitPipeline<String, String>

    @Test("a lone request starts the committer once and wakes nothing: it is committed, then the committer stops")
    func loneRequest() {
        var pipeline = Pipeline()
        #expect(pipeline.submit("a", requests: 1) == .start)
        #expect(pipeline.committer == .running)
        #expect(pipeline.next(inFlight: nil) == .commit(["a"]))
        // Synced inline: nothing in flight after it.
        #expect(pipeline.next(inFlight: nil) == .stop)
        #expect(pipeline.committer == .stopped)
        #expect(pipeline.handOvers == .init(starts: 1, wakes: 0))
        #expect(pipeline.submit("b", requests: 1) == .start, "stopped again: the next request starts it")
    }

    @Test("requests queued while the committer runs cost no hand-over; it takes them all at once")
    func queuedWhileRunning() {
        var pipeline = Pipeline()
        #expect(pipeline.submit("a", requests: 1) == .start)
        #expect(pipeline.submit("b", requests: 2) == Pipeline.Wake.none)
        #expect(pipeline.submit("c", requests: 1) == Pipeline.Wake.none)
        #expect(pipeline.queuedRequests == 4)
        #expect(pipeline.next(inFlight: nil) == .commit(["a", "b", "c"]))
        #expect(pipeline.queuedRequests == 0)
        #expect(pipeline.handOvers == .init(starts: 1, wakes: 0))
    }

    @Test("with few requests in flight, the committer waits for one more request or a sync's end, and is woken once for it")
    func waitsForOne() {
        var pipeline = Pipeline()
        _ = pipeline.submit("a", requests: 1)
        #expect(pipeline.next(inFlight: nil) == .commit(["a"]))
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.committer == .waiting(wakeAt: 1))
        #expect(pipeline.submit("b", requests: 1) == .wake)
        #expect(pipeline.submit("c", requests: 1) == Pipeline.Wake.none, "woken already: one signal for one wait")
        #expect(pipeline.next(inFlight: 1) == .commit(["b", "c"]))
        #expect(pipeline.handOvers == .init(starts: 1, wakes: 1))
    }

    @Test("under load (busy requests in flight) the committer is woken for a chunk of requests at a time (a quarter of those in flight, four at least), not for each")
    func wakesInChunks() {
        var pipeline = Pipeline(prepareChunk: 4, busy: 16)
        _ = pipeline.submit("first", requests: 16)
        #expect(pipeline.next(inFlight: nil) == .commit(["first"]))
        var wakes = 0
        for round in 0..<16 {
            #expect(pipeline.next(inFlight: 16) == .wait)
            var woken = 0
            for request in 0..<4 {
                if pipeline.submit("\(round).\(request)", requests: 1) == .wake { woken += 1 }
            }
            #expect(woken == 1, "the fourth request wakes it, the three before do not")
            wakes += woken
            #expect(pipeline.next(inFlight: 16) == .commit((0..<4).map { "\(round).\($0)" }))
        }
        #expect(wakes == 16, "64 requests, 16 wakes")
        #expect(pipeline.handOvers == .init(starts: 1, wakes: 16))
        // Requests queued while it runs are taken at once, however few: a wait and a wake cost more.
        #expect(pipeline.submit("while running", requests: 1) == Pipeline.Wake.none)
        #expect(pipeline.next(inFlight: 16) == .commit(["while running"]))
        // With 64 in flight, a quarter of them.
        #expect(pipeline.next(inFlight: 64) == .wait)
        #expect(pipeline.committer == .waiting(wakeAt: 16))
        #expect((1...16).map { pipeline.submit("q\($0)", requests: 1) }.filter { $0 == .wake }.count == 1, "the 16th wakes it")
        #expect(pipeline.next(inFlight: 64) == .commit((1...16).map { "q\($0)" }))
        // Fewer in flight than `busy`: one request is enough again.
        #expect(pipeline.submit("late", requests: 1) == Pipeline.Wake.none, "it runs")
        #expect(pipeline.next(inFlight: 15) == .commit(["late"]))
    }

    @Test("a sync's end wakes a waiting committer to finish batches; one that ends while it runs is seen before it waits, not lost")
    func syncEnds() {
        var pipeline = Pipeline()
        _ = pipeline.submit("a", requests: 1)
        #expect(pipeline.next(inFlight: nil) == .commit(["a"]))
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.syncEnds() == true)
        #expect(pipeline.next(inFlight: 1) == .finish)
        // Ends while the committer runs (between its look at what is durable and its wait).
        #expect(pipeline.syncEnds() == false)
        #expect(pipeline.next(inFlight: 1) == .finish, "it finishes instead of waiting for a wake that will not come")
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.syncEnds() == true)
        #expect(pipeline.next(inFlight: nil) == .stop, "all finished")
        #expect(pipeline.syncEnds() == false, "a stopped committer is not started for a sync's end")
        #expect(pipeline.committer == .stopped)
        #expect(pipeline.handOvers == .init(starts: 1, wakes: 2))
    }

    @Test("closing: what is queued is committed first, then the log is closed; later requests are refused")
    func close() {
        var pipeline = Pipeline()
        #expect(pipeline.submit("a", requests: 1) == .start)
        #expect(pipeline.close("closer") == Pipeline.Wake.none, "it runs")
        #expect(pipeline.submit("late", requests: 1) == nil, "refused once closed")
        #expect(pipeline.next(inFlight: nil) == .commit(["a"]))
        #expect(pipeline.next(inFlight: 1) == .wait, "the batch in flight is finished first")
        #expect(pipeline.syncEnds() == true)
        #expect(pipeline.next(inFlight: nil) == .close(["closer"]))
        #expect(pipeline.committer == .stopped)
        #expect(pipeline.close("again") == .start, "a second close starts it, to resume its closer")
        #expect(pipeline.next(inFlight: nil) == .close(["again"]))
    }

    @Test("a close wakes a waiting committer, which waits again while batches are in flight")
    func closeWhileWaiting() {
        var pipeline = Pipeline()
        _ = pipeline.submit("a", requests: 1)
        _ = pipeline.next(inFlight: nil)
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.close("closer") == .wake)
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.committer == .waiting(wakeAt: 1))
        #expect(pipeline.close("stopped") == .wake)
        #expect(pipeline.next(inFlight: nil) == .close(["closer", "stopped"]))
    }

    @Test("a shared log's news starts a stopped committer, which takes the lines in between batches")
    func appendedElsewhere() {
        var pipeline = Pipeline()
        #expect(pipeline.logChanged(appended: true, roleWanted: false) == .start)
        #expect(pipeline.next(inFlight: nil) == .news(yieldRole: false, catchUp: true, waiters: []))
        #expect(pipeline.next(inFlight: nil) == .stop)
        // With batches in flight, the news waits for them.
        _ = pipeline.submit("a", requests: 1)
        _ = pipeline.next(inFlight: nil)
        #expect(pipeline.next(inFlight: 1) == .wait)
        #expect(pipeline.logChanged(appended: true, roleWanted: false) == .wake)
        #expect(pipeline.next(inFlight: 1) == .wait, "not between batches yet")
        #expect(pipeline.syncEnds() == true)
        #expect(pipeline.next(inFlight: nil) == .news(yieldRole: false, catchUp: true, waiters: []))
        #expect(pipeline.next(inFlight: nil) == .stop)
        _ = pipeline.close("closer")
        #expect(pipeline.logChanged(appended: true, roleWanted: false) == Pipeline.Wake.none, "news after a close is not acted on")
    }

    @Test("another process wants the writer role: no batch starts until those in flight are finished and the role is given up")
    func roleWanted() {
        var pipeline = Pipeline()
        _ = pipeline.submit("a", requests: 1)
        #expect(pipeline.next(inFlight: nil) == .commit(["a"]))
        #expect(pipeline.logChanged(appended: false, roleWanted: true) == Pipeline.Wake.none, "it runs")
        #expect(pipeline.submit("b", requests: 1) == Pipeline.Wake.none)
        #expect(pipeline.next(inFlight: 1) == .wait, "b waits: a batch is in flight")
        #expect(pipeline.submit("c", requests: 5) == Pipeline.Wake.none, "no number of requests wakes it now")
        #expect(pipeline.syncEnds() == true)
        #expect(pipeline.next(inFlight: nil) == .news(yieldRole: true, catchUp: false, waiters: ["b", "c"]),
                "the role is given up, then the queued requests take it again")
        #expect(pipeline.next(inFlight: 6) == .wait, "no longer yielding: the role was given up")
        #expect(pipeline.committer == .waiting(wakeAt: 1))
    }

    @Test("requests put back (a batch cut short, or prepared on lines that failed) go before those queued since")
    func putBack() {
        var pipeline = Pipeline()
        _ = pipeline.submit("a", requests: 1)
        _ = pipeline.submit("b", requests: 2)
        #expect(pipeline.next(inFlight: nil) == .commit(["a", "b"]))
        _ = pipeline.submit("c", requests: 1)
        pipeline.putBack([("a", 1), ("b", 2)])
        #expect(pipeline.queuedRequests == 4)
        #expect(pipeline.next(inFlight: nil) == .commit(["a", "b", "c"]))
    }
}
