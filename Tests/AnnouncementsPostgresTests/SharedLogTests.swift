import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres
@testable import AnnouncementsStore

/// Several stores on one table, as several nodes run them: the writer role moves to whichever
/// has writes, each takes in the others' lines, and the log stays one chain without gaps.
@Suite(.enabled(if: PostgresTesting.isAvailable, PostgresTesting.skipReason))
struct SharedLogTests {
    @Test("writes through three stores on one table make one log without gaps, which each of them holds")
    func writesThroughEveryStore() async throws {
        let place = try Backend.postgres.makePlace()
        let stores = [try await place.open(), try await place.open(), try await place.open()]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (node, store) in stores.enumerated() {
                for writer in 0..<6 {
                    group.addTask {
                        for write in 0..<10 {
                            let created = try await store.create(AnnouncementDraft(title: "n\(node)-w\(writer)-\(write)"), by: "node\(node)")
                            if write % 3 == 0 {
                                _ = try await store.update(id: created.id, AnnouncementPatch(title: "edited by \(node)"), by: "node\(node)", expectedRevision: created.revision)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let replay = try await place.replay()
        // 180 creates and 72 edits.
        #expect(replay.model.seq == 252)
        for store in stores {
            #expect(await store.waitUntilSeq(252, upTo: .seconds(30)))
            #expect(Array(store.snapshot.announcements) == Array(replay.model.announcements))
            #expect(store.head?.hash == replay.lastHash)
        }
        // Every store reads every line back, whoever wrote it, and names each line alike in ETags:
        // by its own link, whether it wrote the line, took it in or replayed it.
        let lines = try await stores[0].eventLines(after: 0, limit: 300)
        #expect(lines.count == 252)
        let tags = lines.map { LineHash(link: $0).tag }
        for store in stores { #expect((1...252).map { store.lineTag(of: $0) } == tags) }
        #expect(try await stores[2].historyLines(id: 1)?.isEmpty == false)
        for store in stores { await store.close() }
        let reopened = try await place.open()
        #expect((1...252).map { reopened.lineTag(of: $0) } == tags)
        await reopened.close()
    }

    // (That the reads are paged at all shows only on a table too large for one statement's
    // timeout; this checks what paging could break: the lines at the boundaries.)
    @Test("start-up, catching up and the tools read the table in pages: lines across page boundaries arrive whole and in order")
    func pagedReads() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.pageRows = 3
        let settings = try #require(place.settings)
        let writer = try await place.open()
        for number in 1...10 { _ = try await writer.create(AnnouncementDraft(title: "A\(number)"), by: "alice") }
        // Start-up: three full pages and one of a single row.
        let (log, replay) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        #expect(Array(replay.model.announcements) == Array(writer.snapshot.announcements))
        #expect(replay.lastHash == writer.head?.hash)
        // Catching up (this log follows nothing by itself): nine lines, three full pages and an empty one.
        for number in 11...19 { _ = try await writer.create(AnnouncementDraft(title: "A\(number)"), by: "alice") }
        let appended = try log.lines(after: log.durableEnd)
        let lines = try await place.lines()
        #expect(lines.count == 19)
        let readBack = appended == lines[10...].flatMap { $0 + [UInt8(ascii: "\n")] }
        #expect(readBack, "read back \(appended.split(separator: UInt8(ascii: "\n")).count) lines, not the 9 appended, byte for byte")
        // The tools (replay, verify, export).
        #expect(try await place.replay().lastHash == writer.head?.hash)
        log.close()
        await writer.close()
    }

    @Test("a write through a store that has not taken in the line its If-Match names yet is decided after it has")
    func expectedLineFromAnotherNode() async throws {
        let place = try Backend.postgres.makePlace()
        let (writer, other) = (try await place.open(), try await place.open())
        for round in 0..<5 {
            // Written through one store, edited at once through the other, with the first's tag.
            let created = try await writer.create(AnnouncementDraft(title: "Round \(round)"), by: "alice")
            let edited = try await other.update(
                id: created.id, AnnouncementPatch(title: "Edited \(round)"), by: "bob",
                expectedRevision: created.revision, expectedLine: writer.lineTag(of: created.revision)
            )
            #expect(edited.title == "Edited \(round)")
        }
        await writer.close()
        await other.close()
    }

    @Test("a store takes in what another appends without being asked, and Min-Seq's wait gets it at once")
    func following() async throws {
        let place = try Backend.postgres.makePlace()
        let writer = try await place.open()
        let follower = try await place.open()
        let created = try await writer.create(AnnouncementDraft(title: "Seen elsewhere"), by: "alice")
        // Asked: the follower reads the table now.
        #expect(await follower.waitUntilSeq(created.revision, upTo: .seconds(30)))
        #expect(follower.snapshot.announcement(id: created.id)?.title == "Seen elsewhere")
        // Not asked: the notification (or the look four times a second) brings it.
        _ = try await writer.update(id: created.id, AnnouncementPatch(title: "Changed elsewhere"), by: "alice")
        // (The published state, polled: `waitForEvents` looks at the index, which runs ahead of it.)
        for _ in 0..<300 where follower.snapshot.seq < 2 {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(follower.snapshot.announcement(id: created.id)?.title == "Changed elsewhere")
        // An idempotency key used through one store is known to the other.
        _ = try await writer.create(AnnouncementDraft(title: "Keyed"), by: "alice", key: "k-1")
        #expect(await follower.waitUntilSeq(3, upTo: .seconds(30)))
        let repeated = try await follower.create(AnnouncementDraft(title: "Keyed"), by: "alice", key: "k-1")
        #expect(repeated.id == 2)
        // An edit's repeat is compared by its change on the announcement before it, as on the
        // store that took it: a title it did not have is another request, though the event (of
        // the body alone) does not hold the title.
        _ = try await writer.update(id: 2, AnnouncementPatch(title: "Keyed", body: .set("<p>b</p>")), by: "alice", key: "k-2")
        #expect(await follower.waitUntilSeq(4, upTo: .seconds(30)))
        await #expect(throws: StoreError.keyReused(key: "k-2", seq: 4)) {
            try await follower.update(id: 2, AnnouncementPatch(title: "Other", body: .set("<p>b</p>")), by: "alice", key: "k-2")
        }
        #expect(try await follower.update(id: 2, AnnouncementPatch(body: .set("<p>b</p>")), by: "alice", key: "k-2").revision == 4)
        #expect(try await place.replay().model.seq == 4)
        await writer.close()
        await follower.close()
    }

    @Test("the listener's session ends a client that is gone or stops reading, as the writer's does (keepalives, tcp_user_timeout): a listener that reads nothing holds back the notifications every node's commits queue")
    func listenerSessionEndsDeadClient() async throws {
        let place = try Backend.postgres.makePlace()
        let store = try await place.open()
        let log = try #require(store.log as? PostgresLog)
        let deadline = ContinuousClock.now + .seconds(60)
        var listening = log.state.withLock { $0.listening }
        while listening == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            listening = log.state.withLock { $0.listening }
        }
        let connection = try #require(listening)
        let rows = try await connection.query(
            "SELECT current_setting('tcp_user_timeout'), current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'), current_setting('tcp_keepalives_count')",
            logger: LogPlace.quiet
        )
        var settings: [String] = []
        for try await (timeout, idle, interval, count) in rows.decode((String, String, String, String).self) { settings = [timeout, idle, interval, count] }
        #expect(settings == ["25000", "10", "5", "3"], "milliseconds, then seconds, seconds and a count")
        await store.close()
    }

    @Test("a listener on a half-open path (the database never hears it gone, and it hears nothing) is found deaf by the node's own ping and connects again: the holder's address is learned again")
    func deafListener() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.listenerCheck = .seconds(1)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let a = try await throughProxy.open()
        let b = try await place.open()
        // B appends until A's listener hears its notices (one sent before A listened is not heard).
        b.advertise("http://127.0.0.1:1")
        let deadline = ContinuousClock.now + .seconds(60)
        while a.writeHolder != "http://127.0.0.1:1", ContinuousClock.now < deadline {
            _ = try await b.create(AnnouncementDraft(title: "Heard"), by: "alice")
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(a.writeHolder == "http://127.0.0.1:1")
        // A's listener alone goes silent; its reads, its looks and its pings go on. (On a busy
        // machine a ping can come late, and A connect its listener again meanwhile: frozen once
        // one listens.)
        var frozenListeners = 0
        while frozenListeners == 0, ContinuousClock.now < deadline {
            frozenListeners = proxy.freezeListeners()
            if frozenListeners == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(frozenListeners >= 1)
        b.advertise("http://127.0.0.1:2")
        let frozen = ContinuousClock.now
        while a.writeHolder != "http://127.0.0.1:2", ContinuousClock.now < deadline {
            _ = try await b.create(AnnouncementDraft(title: "Unheard until A listens again"), by: "alice")
            try await Task.sleep(for: .milliseconds(200))
        }
        // Within twice the check and the second before connecting again, on an idle machine;
        // the bound here is a busy machine's.
        #expect(a.writeHolder == "http://127.0.0.1:2", "A heard B's notices again \(ContinuousClock.now - frozen) after its listener went silent")
        #expect(await a.waitUntilSeq(b.snapshot.seq, upTo: .seconds(30)), "and it took in every line")
        await a.close()
        await b.close()
    }

    @Test("an erasure whose notice another store misses: before the overwrite it serves the lines sealed, and it reads them back itself until they are")
    func erasureNoticeMissed() async throws {
        let settings = try PostgresTesting.settings()
        let (eraserBase, eraserReplay) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        let eraserLog = InterceptedLog(eraserBase, holdsOverwrite: true)
        let eraser = try await EventStore.open(log: eraserLog, replay: eraserReplay, rules: ValidationRules(), seed: [], logger: LogPlace.quiet)
        let (otherBase, otherReplay) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        let other = try await EventStore.open(log: InterceptedLog(otherBase, missesErasureNotices: true), replay: otherReplay, rules: ValidationRules(), seed: [], logger: LogPlace.quiet)
        _ = try await eraser.create(AnnouncementDraft(title: "Phone number of R. Roe", body: "<p>555-0100</p>"), by: "alice")
        #expect(await other.waitUntilSeq(1, upTo: .seconds(30)))
        let erasing = Task { try await eraser.erase(id: 1, by: "root", reason: "personal data") }
        // The erased event is durable; its overwrite waits.
        for _ in 0..<300 where !eraserLog.overwriteWaits.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(await other.waitUntilSeq(2, upTo: .seconds(30)))
        // The other store's feed reads the lines now, before the overwrite (the row still holds
        // the texts), and serves them sealed; so does its history.
        #expect(try !other.sealing(1).replacements.isEmpty, "the row is not overwritten yet")
        let before = try await other.followerLines(after: 0)
        let sealed = String(decoding: before.lines[0], as: UTF8.self)
        #expect(!sealed.contains("555-0100") && sealed.contains(#""sealed":""#), "served before the overwrite: \(sealed)")
        let history = try #require(try await other.historyLines(id: 1))
        #expect(!history.contains { String(decoding: $0, as: UTF8.self).contains("555-0100") })
        #expect(other.unconfirmedSeals.withLock { $0.erased == [1] })
        eraserLog.releaseOverwrite()
        _ = try await erasing.value
        for _ in 0..<100 where !other.unconfirmedSeals.withLock({ $0.erased.isEmpty }) {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(other.unconfirmedSeals.withLock { $0.erased.isEmpty }, "it stops looking once it has read them back")
        let after = String(decoding: try await other.followerLines(after: 0).lines[0], as: UTF8.self)
        #expect(after == sealed, "what it served is what the overwrite wrote")
        await eraser.close()
        await other.close()
    }

    @Test("an erasure through one store: the other drops what its feed kept of those lines, and serves them sealed")
    func erasureReachesOtherNodes() async throws {
        let place = try Backend.postgres.makePlace()
        let eraser = try await place.open()
        let other = try await place.open()
        _ = try await eraser.create(AnnouncementDraft(title: "Phone number of R. Roe", body: "<p>555-0100</p>"), by: "alice")
        _ = try await eraser.create(AnnouncementDraft(title: "Stays"), by: "alice")
        #expect(await other.waitUntilSeq(2, upTo: .seconds(30)))
        // The other store's feed reads the lines and keeps the page.
        let before = try await other.followerLines(after: 0)
        #expect(before.lines.count == 2 && String(decoding: before.lines[0], as: UTF8.self).contains("555-0100"))
        // What keeps texts beside the other store (its HTTP layer's encoded answers) is told too.
        let told = Mutex<[String]>([])
        other.whenErased { ids, seq in told.withLock { $0.append("\(ids) \(seq)") } }
        _ = try await eraser.erase(id: 1, by: "root", reason: "personal data")
        #expect(await other.waitUntilSeq(3, upTo: .seconds(30)))
        for _ in 0..<300 where told.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(100)) }
        #expect(told.withLock { $0 } == ["[1] 3"])
        var first = ""
        for _ in 0..<300 {
            first = String(decoding: try await other.followerLines(after: 0).lines[0], as: UTF8.self)
            if !first.contains("555-0100") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!first.contains("555-0100") && first.contains(#""sealed":""#), "\(first)")
        #expect(other.snapshot.announcement(id: 1) == nil && other.snapshot.erased[1] == 3)
        await eraser.close()
        await other.close()
    }

    @Test("two stores opened at once on an empty table seed it once")
    func seedOnce() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let seed = [AnnouncementDraft(title: "Welcome"), AnnouncementDraft(title: "Lunch")]
        // Both logs replay the empty table before either store seeds it: both are to seed.
        let (firstLog, firstReplay) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        let (secondLog, secondReplay) = try await PostgresLog.open(settings, logger: LogPlace.quiet)
        #expect(firstReplay.model.seq == 0 && secondReplay.model.seq == 0)
        async let first = EventStore.open(log: firstLog, replay: firstReplay, seed: seed, logger: LogPlace.quiet)
        async let second = EventStore.open(log: secondLog, replay: secondReplay, seed: seed, logger: LogPlace.quiet)
        let stores = try await [first, second]
        #expect(try await place.replay().model.announcements.map(\.title) == ["Welcome", "Lunch"])
        for store in stores {
            #expect(await store.waitUntilSeq(2, upTo: .seconds(30)))
            #expect(store.snapshot.seq == 2)
            await store.close()
        }
    }

    @Test("a writer that keeps the role gives it up when another asks, between its batches")
    func roleMoves() async throws {
        let place = try Backend.postgres.makePlace()
        let busy = try await place.open()
        let other = try await place.open()
        _ = try await busy.create(AnnouncementDraft(title: "Holds the role"), by: "alice")
        let log = try #require(busy.log as? PostgresLog)
        #expect(log.holdsWriterRole)
        // The other store asks for the role while the busy one goes on writing, one write after
        // another, until the other's writes are in (or far longer than a handover takes), and once more.
        let otherDone = Flag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // Once the other is done, one more write, begun after the other's last one.
                var write = 0
                while write < 3_000 {
                    let sawOtherDone = otherDone.isSet
                    _ = try await busy.create(AnnouncementDraft(title: "busy \(write)"), by: "alice")
                    write += 1
                    if sawOtherDone { break }
                }
            }
            group.addTask {
                for write in 0..<5 { _ = try await other.create(AnnouncementDraft(title: "other \(write)"), by: "bob") }
                otherDone.set()
            }
            try await group.waitForAll()
        }
        let titles = try await place.replay().model.announcements.map(\.title)
        #expect(titles.filter { $0.hasPrefix("other") }.count == 5)
        // The busy store wrote again after the other's writes: the role went to the other and back
        // while the busy one still had writes to make.
        let lastOther = try #require(titles.lastIndex { $0.hasPrefix("other") })
        let lastBusy = try #require(titles.lastIndex { $0.hasPrefix("busy") })
        #expect(lastOther < lastBusy, "the other's writes waited for the busy store to stop")
        #expect(titles.count < 3_000, "the role moved long before the busy store's last write")
        await busy.close()
        await other.close()
    }

    @Test("a line another process appended that this store cannot take in: health says so, naming the line (not as a failed write of its own), reads go on, and nothing is appended after it")
    func unreadableLine() async throws {
        let place = try Backend.postgres.makePlace()
        let store = try await place.open()
        // A row nobody with the writer role wrote, whose line is not an event.
        try await place.withConnection { rogue, settings in
            try await rogue.query("""
                INSERT INTO \(unescaped: settings.table) (seq, position, id, type, by, at, line)
                VALUES (1, 0, 1, 'created', 'rogue', now(), '\\x7b7d')
                """, logger: LogPlace.quiet)
        }
        var health = store.health
        for _ in 0..<150 {
            if case .blocked = health { break }
            try await Task.sleep(for: .milliseconds(100))
            health = store.health
        }
        // Not a write of this store's that failed: what another appended, named by its line.
        guard case .blocked = health, let reason = health.reason else {
            Issue.record("health is \(health), not blocked")
            return
        }
        #expect(reason.hasPrefix("cannot take in what other nodes appended (line 1: ") && !reason.contains("last write"), "\(reason)")
        #expect(store.snapshot.seq == 0)
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "After a bad line"), by: "alice") }
        #expect(try await place.rowCount() == 1, "nothing appended after the line the store could not read")
        let log = try #require(store.log as? PostgresLog)
        #expect(!log.holdsWriterRole)
        await store.close()
    }

    @Test("rows removed under a store: its next append finds the table not ending where its lines do, and leaves no gap")
    func noGap() async throws {
        let place = try Backend.postgres.makePlace()
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        try await place.withConnection { rogue, settings in
            try await rogue.query("DELETE FROM \(unescaped: settings.table)", logger: LogPlace.quiet)
        }
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Two"), by: "alice") }
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Three"), by: "alice") }
        #expect(try await place.rowCount() == 0, "no row after the gap")
        await store.close()
    }

    @Test("a writer whose session the server ended while it was idle notices, takes in what another store appends, and writes again on a new session (its insert prepared again: the first died with the old one)")
    func lostSessionNoticed() async throws {
        let place = try Backend.postgres.makePlace()
        let first = try await place.open()
        let second = try await place.open()
        _ = try await first.create(AnnouncementDraft(title: "Before"), by: "alice")
        try await place.endWriterSession()
        _ = try await second.create(AnnouncementDraft(title: "After"), by: "bob")
        // The first store makes no write: its look finds its session gone, and it follows again.
        var titles: [String] = []
        for _ in 0..<150 where titles.count < 2 {
            try await Task.sleep(for: .milliseconds(100))
            titles = first.snapshot.announcements.map(\.title)
        }
        #expect(titles == ["Before", "After"])
        _ = try await first.create(AnnouncementDraft(title: "Again"), by: "alice")
        #expect(first.snapshot.announcements.map(\.title) == ["Before", "After", "Again"])
        #expect(try await place.rowCount() == 3)
        await first.close()
        await second.close()
    }

    @Test("a store in line for the writer role takes in what the holder appends meanwhile")
    func followsWhileWaitingForTheRole() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        // A holder that never gives the role up (opened alone, as `import` opens it).
        let holder = try await place.open(alone: true)
        _ = try await holder.create(AnnouncementDraft(title: "First"), by: "alice")
        let waiting = try await place.open()
        let written = Flag()
        let started = ContinuousClock.now
        let pending = Task {
            defer { written.set() }
            return try await waiting.create(AnnouncementDraft(title: "From the waiting store"), by: "bob")
        }
        // Its request is in the lock's queue before the holder writes again. Looked for from a
        // thread of the test's own, until the write ends: on a busy machine the cooperative pool
        // may not run this task for longer than the write waits in line (the write's own wait
        // runs on the store's committer thread).
        let admin = try await PostgresLog.connect(settings, id: 99, logger: LogPlace.quiet)
        let waitingRequests: PostgresQuery = """
            SELECT count(*) FROM (\(unescaped: PostgresLog.roleLocks(settings.table))) AS role WHERE NOT granted
            """
        let queued = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                let deadline = Date() + 120
                while Date() < deadline, !written.isSet {
                    let result: PostgresQueryResult? = try? admin.query(waitingRequests, logger: LogPlace.quiet).wait()
                    if (try? result?.rows.first?.decode(Int64.self)) == 1 { return continuation.resume(returning: true) }
                    usleep(20_000)
                }
                continuation.resume(returning: false)
            }.start()
        }
        #expect(queued, "the waiting store's request for the role is queued")
        _ = try await holder.create(AnnouncementDraft(title: "Meanwhile"), by: "alice")
        var seen = false
        for _ in 0..<150 where !seen {
            try await Task.sleep(for: .milliseconds(100))
            seen = waiting.snapshot.announcements.contains { $0.title == "Meanwhile" }
        }
        #expect(seen, "the holder's line is taken in while the write waits for the role")
        // (A busy machine may have taken longer than a write's wait for the role: then it failed.)
        let inTime = ContinuousClock.now - started < EventStore.roleWaitLimit
        #expect(!written.isSet || !inTime, "the write still waits for the role")
        await holder.close()
        let titles: [String]
        switch await pending.result {
        case .success:
            titles = ["First", "Meanwhile", "From the waiting store"]
        case .failure(let error):
            #expect(ContinuousClock.now - started >= EventStore.roleWaitLimit, "the write failed before its wait's limit: \(error)")
            titles = ["First", "Meanwhile"]
        }
        #expect(try await place.replay().model.announcements.map(\.title) == titles)
        try await admin.close()
        await waiting.close()
    }
}

/// Set once, from another task.
final class Flag: Sendable {
    private let state = Atomic<Bool>(false)

    var isSet: Bool { state.load(ordering: .acquiring) }

    func set() {
        state.store(true, ordering: .releasing)
    }
}
