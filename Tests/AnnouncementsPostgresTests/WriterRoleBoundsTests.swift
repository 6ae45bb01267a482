import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres
@testable import AnnouncementsStore

/// The bounds of the writer role on a shared table: how long a write waits for it, how long a
/// holder that makes no progress keeps it, and that a process that lost it appends nothing.
@Suite(.enabled(if: PostgresTesting.isAvailable, PostgresTesting.skipReason), .timeLimit(.minutes(5)))
struct WriterRoleBoundsTests {
    @Test("a write waits for the writer role at most the store's limit (10 s, before the database's own lock_timeout, 21 s), then fails as locked and leaves the line; the next write takes the role")
    func boundedWait() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let store = try await place.open()
        // A session that is not a node's holds the role: nobody ends it.
        let holder = try await PostgresLog.connect(settings, id: 99, logger: LogPlace.quiet)
        defer { PostgresLog.closeSoon(holder) }
        let key = PostgresLog.lockKey(settings.table)
        try await holder.query("SELECT pg_advisory_lock(\(key))", logger: LogPlace.quiet)
        let started = ContinuousClock.now
        let failure = await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Refused"), by: "alice") }
        let waited = ContinuousClock.now - started
        // Then it leaves the line: a cancel and its answer, each waited for 5 s at most. The
        // message says the store's limit ended the wait, not the database's lock_timeout (21 s);
        // the upper bound is a hang's, wide enough for a machine that runs every suite at once
        // beside busy loops (22.8 s seen there, for 10.2 s alone).
        #expect(waited >= EventStore.roleWaitLimit && waited < EventStore.roleWaitLimit + .seconds(40), "waited \(waited)")
        if case .log(let error) = failure {
            #expect(error.kind == .locked && error.message.contains("waited 10.0 seconds for the writer role"), "\(error.message)")
        } else {
            Issue.record("\(String(describing: failure))")
        }
        // Out of line: no request of the store's is left queued, and health says why writes fail.
        let queued = try await holder.query("SELECT count(*) FROM (\(unescaped: PostgresLog.roleLocks(settings.table))) AS role WHERE NOT granted", logger: LogPlace.quiet)
        for try await count in queued.decode(Int64.self) { #expect(count == 0) }
        #expect(store.health.reason?.contains("the last try for the writer role failed") == true, "\(String(describing: store.health.reason))")
        try await holder.query("SELECT pg_advisory_unlock(\(key))", logger: LogPlace.quiet)
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(store.health == .ok)
        #expect(try await place.replay().model.announcements.map(\.title) == ["After"])
        await store.close()
    }

    @Test("a database that stops answering (a host gone silent, no reset) makes health say so once a look at the table has waited 5 s for its answer, long before the commit timeout (30 s) ends the look; it clears once the database answers")
    func silentDatabaseInHealth() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.commitTimeout = .seconds(30)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let store = try await throughProxy.open()
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "alice")
        proxy.freeze()
        let frozen = ContinuousClock.now
        var said: Duration?
        while said == nil, ContinuousClock.now - frozen < .seconds(25) {
            if store.health.reason?.contains("the database has not answered a look at it") == true { said = ContinuousClock.now - frozen }
            try await Task.sleep(for: .milliseconds(50))
        }
        // (At the commit timeout the look fails and health says so in other words: before that,
        // only a look left unanswered says it.)
        #expect(said.map { $0 >= WriterRole<Int>.unansweredAfter - .seconds(1) } == true, "health said the database is silent after \(said.map { "\($0)" } ?? "more than 25 s")")
        proxy.thaw()
        let thawed = ContinuousClock.now
        while store.health != .ok, ContinuousClock.now - thawed < .seconds(30) { try await Task.sleep(for: .milliseconds(50)) }
        #expect(store.health == .ok, "\(String(describing: store.health.reason))")
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["Before", "After"])
        await store.close()
    }

    @Test(
        "a write whose node must connect its writer again waits at most the store's limit (10 s) for it, though each step may take the commit timeout (30 s): one deadline for the whole setup, whether the write connects or finds the look connecting (whose connection it leaves standing); after, the next write goes through",
        arguments: [false, true]
    )
    func boundedReconnect(lookConnects: Bool) async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.commitTimeout = .seconds(30)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let store = try await throughProxy.open()
        // The writer's session is gone, and the database goes silent once a new session has
        // connected and sent its first setting. (A connection that cannot be made at all fails at
        // postgres-nio's own connect timeout, 10 s.) Closed while the store does not hold the
        // role, nothing connects it again before a write asks for the role; marked lost (as after
        // a commit whose answer never came), the look connects it again.
        let log = try #require(store.log as? PostgresLog)
        try await log.writer.withLock { $0 }.close().get()
        proxy.freeze(afterClientSends: "SET synchronous_commit TO on")
        if lookConnects {
            log.state.withLock { $0.role.reconnectFailed(midAppend: false) }
            for _ in 0..<100 where log.state.withLock({ $0.role.writerLost }) { try await Task.sleep(for: .milliseconds(50)) }
            try #require(!log.state.withLock { $0.role.writerLost }, "the look took the lost session up")
        }
        let sent = ContinuousClock.now
        let failure = await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Refused"), by: "alice") }
        let waited = ContinuousClock.now - sent
        // Without the deadline, the first setting's answer alone was waited for 30 s. The upper
        // bound leaves a loaded machine its seconds, below that.
        #expect(waited >= EventStore.roleWaitLimit - .seconds(1) && waited < EventStore.roleWaitLimit + .seconds(8), "waited \(waited)")
        let expected = lookConnects ? "is being connected again" : "did not set up the writer's session"
        if case .log(let error) = failure {
            #expect(error.kind == .unavailable && error.message.contains(expected), "\(error.message)")
        } else {
            Issue.record("\(String(describing: failure))")
        }
        if lookConnects {
            // The look's connection stands: the write's failure marked nothing lost, closed nothing.
            #expect(!log.state.withLock { $0.role.writerLost })
        }
        proxy.thaw()
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["After"])
        await store.close()
    }

    @Test("a holder cut off from the database (a half-open path: its session still there) loses the role once another has waited the stall limit; health says so meanwhile; after, its own writes go through again, and nothing is lost or doubled")
    func stalledHolder() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.commitTimeout = .seconds(20)
        let settings = try #require(place.settings)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let holder = try await throughProxy.open()
        let other = try await place.open()
        _ = try await holder.create(AnnouncementDraft(title: "Before"), by: "alice")
        #expect(await other.waitUntilSeq(1, upTo: .seconds(30)))
        proxy.freeze()
        // Every copying thread of the proxy has seen it (each polls for 20 ms at most).
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        let written = Flag()
        // Timed from when the task sends the write to when the store decided it (its time, on the
        // same clock): a busy machine's cooperative pool may run the task, or resume it with the
        // answer, seconds late, which is the test's time, not the stores'.
        let write = Task {
            defer { written.set() }
            let sent = Timestamp.now()
            let made = try await other.create(AnnouncementDraft(title: "While frozen"), by: "bob")
            return Duration.milliseconds(made.createdAt.millisecondsSince1970 - sent.millisecondsSince1970)
        }
        // Past two seconds in line, the asker says writes wait, naming the holder. (Watched from a
        // thread of its own: a busy machine's cooperative pool may not run a task in that window.)
        let degraded = Mutex<String?>(nil)
        let watcher = Thread {
            while !written.isSet, ContinuousClock.now - started < .seconds(30) {
                if let reason = other.health.reason, reason.contains("writes wait for the writer role") { degraded.withLock { $0 = reason } }
                usleep(20_000)
            }
        }
        watcher.start()
        let waited = try await write.value
        // It went through, so the role came within the write's 10 s wait for it (a later one
        // leaves the line, and the write fails): the holder lost it, once the write had waited the
        // stall limit, and at the next look after it (a second apart), with a few seconds for a
        // loaded machine's database. (Timed to the write's decision: its commit is not counted.)
        #expect(waited >= settings.stallLimit && waited < settings.stallLimit + .seconds(4), "the write through the other store waited \(waited)")
        let reason = degraded.withLock { $0 }
        #expect(reason?.contains("announcements writer node=") == true, "\(reason ?? "health never said writes wait")")
        #expect(other.health == .ok, "\(String(describing: other.health.reason))")
        proxy.thaw()
        // The cut-off holder finds its session ended; a write through it fails at most once
        // (retryable, nothing appended), and then takes the role again.
        var failures = 0
        while true {
            do {
                _ = try await holder.create(AnnouncementDraft(title: "After"), by: "alice")
                break
            } catch {
                failures += 1
                guard failures < 3, case .log = error else { throw error }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let titles = try await place.replay().model.announcements.map(\.title)
        #expect(titles == ["Before", "While frozen", "After"])
        await holder.close()
        await other.close()
    }

    @Test("a write whose commit's answer is lost fails (its outcome unknown) and health says so; once the writer connects again health clears without another write, and the next write takes in the lost one's line, which had committed")
    func writerConnectsAgain() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.commitTimeout = .seconds(3)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let store = try await throughProxy.open()
        _ = try await store.create(AnnouncementDraft(title: "A"), by: "alice")
        // The next append (one statement that commits) reaches the database; its answer does not
        // come back.
        proxy.freeze(afterClientSends: #""title":"B""#)
        let failure = await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "B"), by: "alice") }
        #expect("\(String(describing: failure))".contains("whether it was committed is unknown"), "\(String(describing: failure))")
        #expect(store.health.reason?.contains("the last write to the log failed") == true, "\(String(describing: store.health.reason))")
        // While the network stays silent, the writer cannot connect again: health stays degraded.
        try await Task.sleep(for: .seconds(1))
        #expect(store.health != .ok, "not connected again yet")
        proxy.thaw()
        var healthy = false
        for _ in 0..<100 where !healthy {
            try await Task.sleep(for: .milliseconds(100))
            healthy = store.health == .ok
        }
        #expect(healthy, "\(String(describing: store.health.reason))")
        _ = try await store.create(AnnouncementDraft(title: "C"), by: "alice")
        #expect(store.snapshot.announcements.map(\.title) == ["A", "B", "C"])
        #expect(try await place.replay().model.announcements.map(\.title) == ["A", "B", "C"])
        await store.close()
    }

    @Test("an append through a session that does not hold the writer role is refused by the database, however sure the process is that it holds it")
    func fencedByTheDatabase() async throws {
        let source = try Backend.postgres.makePlace()
        let seeded = try await source.open(seed: [AnnouncementDraft(title: "A")])
        await seeded.close()
        let line = try #require(try await source.lines().first) + [UInt8(ascii: "\n")]

        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let (log, _) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        defer { log.close() }
        let other = try await PostgresLog.connect(settings, id: 99, logger: LogPlace.quiet)
        defer { PostgresLog.closeSoon(other) }
        try await other.query("SELECT pg_advisory_lock(\(PostgresLog.lockKey(settings.table)))", logger: LogPlace.quiet)
        // The process believes it holds the role (as one whose session was ended, while it was
        // stopped, believes when it wakes).
        log.state.withLock { $0.role.took() }
        let refusal = #expect(throws: LogError.self) { try line.withBytes { try log.appendDurably($0, at: 0) } }
        #expect(refusal?.message.contains("another node holds the writer role") == true, "\(String(describing: refusal))")
        #expect(try await place.rowCount() == 0)
        #expect(!log.holdsWriterRole, "the role is given up")
    }
}
