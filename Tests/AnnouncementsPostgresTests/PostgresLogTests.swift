import Foundation
import Logging
import PostgresNIO
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres
@testable import AnnouncementsStore

/// What only the PostgreSQL log has to show: order without gaps for readers of the table, the
/// writer role in the database, and what a refused or lost commit does.
@Suite(.enabled(if: PostgresTesting.isAvailable, PostgresTesting.skipReason))
struct PostgresLogTests {
    let quiet = LogPlace.quiet

    /// A connection of the test's own: another reader of the table, or a rogue writer.
    func connect(_ settings: PostgresSettings) async throws -> PostgresConnection {
        try await PostgresLog.connect(settings, id: 99, logger: quiet)
    }

    @Test("readers of the table never see a seq before every seq below it has committed, under 64 writers")
    func orderWithoutGaps() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let store = try await place.open()
        let reader = try await connect(settings)
        let writing = Atomic<Bool>(true)
        // The race a bigserial invites: a reader that sees seq n+1 while n is uncommitted skips n
        // forever. Look as often as possible while batches commit, and check that what is visible
        // is always a prefix: as many rows as the highest seq.
        async let looks: [(count: Int64, max: Int64)] = {
            var seen: [(Int64, Int64)] = []
            while writing.load(ordering: .relaxed) || seen.isEmpty {
                let rows = try await reader.query("SELECT count(*), coalesce(max(seq), 0) FROM \(unescaped: settings.table)", logger: quiet)
                for try await (count, max) in rows.decode((Int64, Int64).self) { seen.append((count, max)) }
            }
            return seen
        }()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<64 {
                group.addTask {
                    for write in 0..<8 { _ = try await store.create(AnnouncementDraft(title: "w\(writer)-\(write)"), by: "w") }
                }
            }
            try await group.waitForAll()
        }
        writing.store(false, ordering: .relaxed)
        let seen = try await looks
        #expect(seen.count > 1)
        for look in seen { #expect(look.count == look.max, "a reader saw \(look.count) rows up to seq \(look.max): a gap") }
        #expect(store.appendCounts.batches < 512, "the 512 writes went out in fewer commits")
        try await reader.close()
        await store.close()
    }

    @Test("a batch the database refuses fails its writers, appends nothing and keeps the state")
    func refusedBatch() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "alice")
        // A row for seq 2 that the store does not know of: its own seq 2 is refused by the key.
        let rogue = try await connect(settings)
        try await rogue.query("""
            INSERT INTO \(unescaped: settings.table) (seq, position, id, type, by, at, line)
            VALUES (2, 999999, 9, 'deleted', 'rogue', now(), '\\x7b7d')
            """, logger: quiet)
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Refused"), by: "alice") }
        #expect(store.snapshot.announcements.map(\.title) == ["Kept"])
        #expect(store.lastSeq == 1)
        if case .failing(let error) = store.health {
            #expect(error.message.contains("duplicate key"), "\(error.message)")
        } else {
            Issue.record("health is \(store.health), not failing")
        }
        try await rogue.close()
        await store.close()
    }

    @Test("when the writer's session dies its role goes with it: another process takes it, and the old one takes it again after reading what it missed")
    func failover() async throws {
        var place = try Backend.postgres.makePlace()
        // The old writer may not notice that its session is gone: it gives up after this long
        // (long enough for every other commit on a busy machine).
        place.settings?.commitTimeout = .seconds(10)
        let first = try await place.open()
        let second = try await place.open()
        _ = try await first.create(AnnouncementDraft(title: "Before"), by: "alice")
        try await place.endWriterSession()
        _ = try await second.create(AnnouncementDraft(title: "After"), by: "bob")
        #expect(second.snapshot.announcements.map(\.title) == ["Before", "After"])
        // The old writer has given up the role when the other asked for it, or finds its session
        // gone when it next appends (that write fails, its outcome unknown); either way the write
        // after connects again, takes the role, reads "After", and appends after it.
        let maybe = try? await first.create(AnnouncementDraft(title: "Maybe"), by: "alice")
        _ = try await first.create(AnnouncementDraft(title: "Again"), by: "alice")
        let expected = ["Before", "After"] + (maybe == nil ? [] : ["Maybe"]) + ["Again"]
        #expect(first.snapshot.announcements.map(\.title) == expected)
        #expect(try await place.replay().model.announcements.map(\.title) == expected)
        await second.close()
        await first.close()
    }

    @Test("a batch the database refuses at commit (a deferred constraint) fails its writers and appends nothing; the next one succeeds")
    func refusedAtCommit() async throws {
        let place = try Backend.postgres.makePlace()
        let store = try await place.open(alone: true)
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "alice")
        // A check run when the transaction commits, after the INSERT itself has been answered: an
        // error there rolls the rows back (as a full NOTIFY queue or a serialization failure would).
        try await place.addTrigger("refuse", .atCommit, running: "RAISE EXCEPTION 'refused at commit by the test';")
        await #expect(throws: StoreError.self, "answered as written, though its rows were rolled back") {
            try await store.create(AnnouncementDraft(title: "Refused"), by: "alice")
        }
        #expect(try await place.rowCount() == 1)
        #expect(store.snapshot.announcements.map(\.title) == ["Kept"])
        #expect(store.lastSeq == 1)
        if case .unusable = store.health { Issue.record("a refusal the database made leaves the log usable") }
        try await place.dropTrigger("refuse")
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["Kept", "After"])
        await store.close()
    }

    @Test("a wait in line for the writer role that the database never answers (its host gone silent) fails its write after the commit timeout; the next write connects again")
    func silentWaitForRole() async throws {
        var place = try Backend.postgres.makePlace()
        place.settings?.commitTimeout = .seconds(5)
        let settings = try #require(place.settings)
        let (throughProxy, proxy) = try place.throughProxy()
        defer { proxy.stop() }
        let store = try await throughProxy.open()
        // Another session holds the writer role and keeps it: the store's write waits in line.
        let key = PostgresLog.lockKey(settings.table)
        let holder = try await connect(settings)
        defer { PostgresLog.closeSoon(holder) }
        try await holder.query("SELECT pg_advisory_lock(\(key))", logger: quiet)
        // Once the store has asked for the lock, the network goes silent: the database's own
        // lock_timeout answer (at 3.5 s) never arrives.
        proxy.freeze(afterClientSends: "pg_advisory_lock(")
        let clock = ContinuousClock()
        let outcome = Mutex<Result<Announcement, any Error>?>(nil)
        let started = clock.now
        Task {
            let result: Result<Announcement, any Error>
            do { result = .success(try await store.create(AnnouncementDraft(title: "Lost"), by: "alice")) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
        }
        while outcome.withLock({ $0 == nil }), clock.now - started < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let waited = clock.now - started
        #expect(waited < .seconds(60), "the write still waits for the role \(waited) after the network went silent")
        proxy.thaw()
        try await holder.query("SELECT pg_advisory_unlock(\(key))", logger: quiet)
        while outcome.withLock({ $0 == nil }), clock.now - started < .seconds(120) { try await Task.sleep(for: .milliseconds(50)) }
        if case .failure(let error) = outcome.withLock({ $0 }) {
            #expect("\(error)".contains("did not answer the request for the writer role"), "\(error)")
        } else {
            Issue.record("the write that waited for the role succeeded")
        }
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["After"])
        await store.close()
    }

    @Test("a write that waits in line for the writer role past the commit timeout fails as locked, saying so; the next write takes it")
    func roleNotGivenUp() async throws {
        var place = try Backend.postgres.makePlace()
        // The database ends the wait at 7 s (its lock_timeout); the store would give up at 10.
        place.settings?.commitTimeout = .seconds(10)
        let settings = try #require(place.settings)
        let store = try await place.open()
        let key = PostgresLog.lockKey(settings.table)
        let holder = try await connect(settings)
        defer { PostgresLog.closeSoon(holder) }
        try await holder.query("SELECT pg_advisory_lock(\(key))", logger: quiet)
        let failure = await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Refused"), by: "alice") }
        if case .log(let error) = failure {
            #expect(error.kind == .locked)
            #expect(error.message.contains("held the writer role (PostgreSQL advisory lock \(key)) and did not give it up"), "\(error.message)")
        } else {
            Issue.record("\(String(describing: failure))")
        }
        try await holder.query("SELECT pg_advisory_unlock(\(key))", logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["After"])
        await store.close()
    }

    @Test("a server starts while an import's transaction holds the table (rows inserted, not committed), and reads what is committed")
    func startsBesideImport() async throws {
        var place = try Backend.postgres.makePlace()
        // A CREATE INDEX in line behind the import would be cancelled at 3.5 s (lock_timeout).
        place.settings?.commitTimeout = .seconds(5)
        let first = try await place.open()
        _ = try await first.create(AnnouncementDraft(title: "Committed"), by: "alice")
        await first.close()
        // As an import does: rows inserted in a transaction still open (a lock on the table that
        // CREATE INDEX, even IF NOT EXISTS, would wait for).
        let importer = try await connect(try #require(place.settings))
        defer { PostgresLog.closeSoon(importer) }
        try await importer.query("BEGIN", logger: quiet)
        try await importer.query("""
            INSERT INTO \(unescaped: try #require(place.settings).table) (seq, position, id, type, by, at, line)
            VALUES (99, 999999, 9, 'deleted', 'importer', now(), '\\x7b7d')
            """, logger: quiet)
        let store = try await place.open()
        #expect(store.snapshot.announcements.map(\.title) == ["Committed"])
        await store.close()
        try await importer.query("ROLLBACK", logger: quiet)
    }

    @Test("a commit held up past the timeout is ended by the database, fails its writer and appends nothing; the next one succeeds")
    func heldUpCommit() async throws {
        var place = try Backend.postgres.makePlace()
        // Long enough for the other commits on a busy machine; the held-up one waits for ever.
        // Its lock wait ends at 7 s (lock_timeout), a second before its statement's timeout
        // (whose cancel would leave the outcome unknown: see `committedByProcedure`).
        place.settings?.commitTimeout = .seconds(10)
        let settings = try #require(place.settings)
        let store = try await place.open(alone: true)
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "alice")
        // Another session locks the table: the writer's INSERT waits, and its lock_timeout (just
        // under the commit timeout) makes the server cancel it, a clean refusal.
        let blocker = try await connect(settings)
        try await blocker.query("BEGIN", logger: quiet)
        try await blocker.query("LOCK TABLE \(unescaped: settings.table) IN ACCESS EXCLUSIVE MODE", logger: quiet)
        let clock = ContinuousClock()
        let start = clock.now
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Held up"), by: "alice") }
        #expect(clock.now - start < .seconds(60), "ended by the timeout, not by the blocker")
        try await blocker.query("ROLLBACK", logger: quiet)
        #expect(store.lastSeq == 1)
        if case .unusable = store.health { Issue.record("a refusal the database made leaves the log usable") }
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(try await place.replay().model.announcements.map(\.title) == ["Before", "After"])
        try await blocker.close()
        await store.close()
    }

    @Test("when the connection that reads lines back is dropped, reads connect again")
    func readerReconnects() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "Read back"), by: "alice")
        #expect(try await store.historyLines(id: 1)?.count == 1)
        let admin = try await connect(settings)
        // The reader's last query: a read of lines, or the follower's look at the table's end.
        let terminated = try await admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE query LIKE \("SELECT line FROM \(settings.table) %") OR (query LIKE 'WITH role AS%' AND query LIKE \("%FROM \(settings.table) ORDER BY seq DESC%"))
            """, logger: quiet)
        var ended = 0
        for try await done in terminated.decode(Bool.self) where done { ended += 1 }
        #expect(ended == 1, "the reader's session was ended")
        var readAgain = false
        for _ in 0..<150 where !readAgain {
            readAgain = (try? await store.historyLines(id: 1))??.count == 1
            if !readAgain { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(readAgain, "history is read again after the reader's session ended")
        _ = try await store.create(AnnouncementDraft(title: "Still writing"), by: "alice")
        try await admin.close()
        await store.close()
    }

    @Test("the rows hold each event's fields beside its exact line")
    func rows() async throws {
        let place = try Backend.postgres.makePlace()
        let settings = try #require(place.settings)
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "Row"), by: "alice", key: "key-1")
        try await store.delete(id: 1, by: "bob")
        await store.close()
        let reader = try await connect(settings)
        let rows = try await reader.query("SELECT seq, position, id, type, by, key, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') FROM \(unescaped: settings.table) ORDER BY seq", logger: quiet)
        var seen: [String] = []
        for try await (seq, position, id, type, by, key, at) in rows.decode((Int64, Int64, Int64, String, String, String?, String).self) {
            seen.append("\(seq) \(position) \(id) \(type) \(by) \(key ?? "-") \(at)")
        }
        let lines = try await place.lines()
        let times = try lines.map { try EventParser.parse($0).at.description }
        #expect(seen == ["1 0 1 created alice key-1 \(times[0])", "2 \(lines[0].count + 1) 1 deleted bob - \(times[1])"])
        try await reader.close()
    }

    @Test("an append is one statement: the writer's session calls a procedure of its own, which inserts and commits")
    func appendIsOneCall() async throws {
        let place = try Backend.postgres.makePlace()
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "One call"), by: "alice")
        let last = try await place.withConnection { try await Self.lastStatementOfHolder($0, $1.table) }
        #expect(last.hasPrefix("CALL pg_temp.announcements_append("), "the writer's last statement: \(last)")
        #expect(try await place.rowCount() == 1)
        // A new session (the old one ended) makes the procedure again.
        try await place.endWriterSession()
        // The write that finds the session gone fails (its outcome unknown); a later one connects again.
        #expect(try await Self.createOnceWritable(store, title: "Again"), "no write went through once the writer's session had ended")
        let again = try await place.withConnection { try await Self.lastStatementOfHolder($0, $1.table) }
        #expect(again.hasPrefix("CALL pg_temp.announcements_append("), "the new session's last statement: \(again)")
        await store.close()
    }

    @Test("an append cancelled by the statement timeout has an unknown outcome (the cancel can come after the procedure's COMMIT): its writer is told so, and the store reads the table before it appends again")
    func cancelledAppend() async throws {
        var place = try Backend.postgres.makePlace()
        // statement_timeout 8 s (the store waits 10 for the answer), lock_timeout 7 s: a trigger
        // that sleeps holds no lock.
        place.settings?.commitTimeout = .seconds(10)
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "alice")
        try await place.addTrigger("slow", .beforeInsert, running: "PERFORM pg_sleep(30); RETURN NEW;")
        let failure = await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Cancelled"), by: "alice") }
        let message = "\(String(describing: failure))"
        #expect(message.contains("canceling statement due to statement timeout") && message.contains("whether it was committed is unknown"), "\(message)")
        try await place.dropTrigger("slow")
        #expect(try await Self.createOnceWritable(store, title: "After"), "no write went through after the cancelled one")
        #expect(try await place.replay().model.announcements.map(\.title) == ["Before", "After"])
        #expect(store.snapshot.announcements.map(\.title) == ["Before", "After"])
        await store.close()
    }

    @Test("a role without the TEMPORARY privilege on the database appends in a transaction of three statements")
    func withoutTemporaryPrivilege() async throws {
        let base = try Backend.postgres.makePlace()
        var settings = try #require(base.settings)
        let name = "notemp_" + PostgresTesting.uniqueTable()
        try await base.withConnection { connection, _ in
            try await connection.query("CREATE ROLE \(unescaped: name) LOGIN", logger: quiet)
            try await connection.query("CREATE DATABASE \(unescaped: name)", logger: quiet)
            try await connection.query("REVOKE TEMPORARY ON DATABASE \(unescaped: name) FROM PUBLIC", logger: quiet)
        }
        settings.database = name
        var place = LogPlace(backend: .postgres, folder: base.folder, settings: settings)
        try await place.withConnection { connection, _ in
            try await connection.query("GRANT CREATE ON SCHEMA public TO \(unescaped: name)", logger: quiet)
        }
        place.settings?.user = name
        let dropBoth = {
            try await base.withConnection { connection, _ in
                try await connection.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)", logger: quiet)
                try await connection.query("DROP ROLE IF EXISTS \(unescaped: name)", logger: quiet)
            }
        }
        do {
            let store = try await place.open()
            _ = try await store.create(AnnouncementDraft(title: "Three statements"), by: "alice")
            _ = try await store.update(id: 1, AnnouncementPatch(title: "Still three"), by: "alice")
            let last = try await place.withConnection { try await Self.lastStatementOfHolder($0, $1.table) }
            #expect(last == "COMMIT", "the writer's last statement: \(last)")
            #expect(try await place.replay().model.announcements.map(\.title) == ["Still three"])
            await store.close()
        } catch {
            try await dropBoth()
            throw error
        }
        try await dropBoth()
    }

    /// Creates an announcement titled `title` through `store`, trying again 250 ms after each
    /// failure (a writer connecting again), 20 times at most; whether one went through.
    static func createOnceWritable(_ store: EventStore, title: String) async throws -> Bool {
        for attempt in 0..<20 {
            if attempt > 0 { try await Task.sleep(for: .milliseconds(250)) }
            if (try? await store.create(AnnouncementDraft(title: title), by: "alice")) != nil { return true }
        }
        return false
    }

    /// The last statement of the session that holds the writer role on `table`.
    static func lastStatementOfHolder(_ connection: PostgresConnection, _ table: String) async throws -> String {
        let rows = try await connection.query("""
            SELECT activity.query FROM (\(unescaped: PostgresLog.roleLocks(table))) AS role
            JOIN pg_stat_activity AS activity USING (pid) WHERE role.granted
            """, logger: LogPlace.quiet)
        for try await query in rows.decode(String.self) { return query }
        return "(no session holds the writer role)"
    }

    @Test("an import is one transaction: a batch refused midway leaves the table empty, not a prefix that verifies; the next import fills it")
    func importIsAllOrNothing() async throws {
        let place = try Backend.postgres.makePlace()
        // The source: 60 events, imported in batches of about 1 KB (a dozen or more).
        let source = place.folder.file("source.jsonl")
        let store = try await EventStore.open(path: source, logger: quiet)
        for number in 1...60 { _ = try await store.create(AnnouncementDraft(title: "Announcement \(number)"), by: "alice") }
        await store.close()
        let log = try #require(try await place.openLog() as? PostgresLog)
        // The database refuses the row of seq 45, as it would a row past a disk or quota limit.
        try await place.addTrigger("refuse", .beforeInsert, running: "IF NEW.seq = 45 THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW;")
        #expect(throws: LogError.self) { try log.importLines(of: source, batchBytes: 1024) }
        #expect(try await place.rowCount() == 0, "the batches before the refused one were rolled back with it")
        #expect(log.durableEnd == 0)
        try await place.dropTrigger("refuse")
        let end = try log.importLines(of: source, batchBytes: 1024)
        log.close()
        #expect(try await place.rowCount() == 60)
        #expect(end == (try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int64))
        #expect(try await place.replay().model.count == 60)
    }
}
