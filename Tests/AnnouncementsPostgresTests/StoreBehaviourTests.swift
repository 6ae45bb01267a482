import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres
@testable import AnnouncementsStore

/// The store's behaviours, once for each log it can run on: a file, and PostgreSQL (when `make
/// test` started one; `PostgresLogTests` says so when it did not).
@Suite struct StoreBehaviourTests {
    @Test("an erasure leaves none of the announcement's texts in the log, its skeleton and the erasure stay, and the chain verifies", arguments: Backend.available)
    func erases(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open()
        _ = try await store.create(AnnouncementDraft(title: "Stays", body: "<p>kept</p>"), by: "alice")
        let secret = try await store.create(AnnouncementDraft(title: "Home address of R. Roe", body: "<p>12 Elm Street</p>"), by: "alice")
        _ = try await store.update(id: secret.id, AnnouncementPatch(title: "Home address of Richard Roe"), by: "bob")
        let erasure = try await store.erase(id: secret.id, by: "root", reason: "personal data")
        #expect(erasure.sealedLines == [2, 3])
        await #expect(throws: StoreError.erased(id: secret.id, seq: erasure.seq)) { try await store.erase(id: secret.id, by: "root", reason: "again") }
        await store.close()

        let lines = try await place.lines()
        let text = String(decoding: Array(lines.joined(separator: [10])), as: UTF8.self)
        for gone in ["Roe", "Elm Street", "Home address"] { #expect(!text.contains(gone), "\(gone)") }
        #expect(text.contains("Stays") && text.contains("personal data"))
        let report = verify(lines, name: place.source)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.erasedLines == 2 && report.sealed == 4)
        let reopened = try await place.open()
        #expect(reopened.snapshot.announcements.map(\.title) == ["Stays"])
        #expect(reopened.snapshot.erased == [secret.id: erasure.seq])
        await reopened.close()
    }

    @Test("a write expecting a revision's line goes through with this log's tag of it, and fails with another's (a line of another history) or none", arguments: Backend.available)
    func expectedLine(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open()
        let created = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        let line = store.lineTag(of: created.revision)
        #expect(line == LineHash(link: try #require(try await place.lines().last)).tag)
        let foreign = LineTag(rawValue: line.rawValue ^ 1)
        await #expect(throws: StoreError.revisionMismatch(id: created.id, expected: 0, current: created.revision)) {
            try await store.update(id: created.id, AnnouncementPatch(title: "Two"), by: "bob", expectedRevision: created.revision, expectedLine: foreign)
        }
        await #expect(throws: StoreError.revisionMismatch(id: created.id, expected: 0, current: created.revision)) {
            try await store.delete(id: created.id, by: "bob", expectedRevision: created.revision, expectedLine: foreign)
        }
        let edited = try await store.update(id: created.id, AnnouncementPatch(title: "Two"), by: "bob", expectedRevision: created.revision, expectedLine: line)
        #expect(edited.title == "Two")
        try await store.delete(id: created.id, by: "bob", expectedRevision: edited.revision, expectedLine: store.lineTag(of: edited.revision))
        #expect(store.snapshot.announcement(id: created.id) == nil)
        await store.close()
    }

    @Test("writes, edits and deletes replay to the live state, and a reopened store resumes it", arguments: Backend.available)
    func resumes(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open(seed: [AnnouncementDraft(title: "Seeded", body: "<p>s</p>")])
        let first = try await store.create(AnnouncementDraft(title: "First", body: "<p>1</p>"), by: "alice")
        _ = try await store.update(id: first.id, AnnouncementPatch(title: "First!", body: .clear), by: "bob")
        try await store.delete(id: 1, by: "carol")
        let live = store.snapshot
        let head = store.head
        await store.close()

        let reopened = try await place.open(seed: [AnnouncementDraft(title: "Not seeded again")])
        #expect(Array(reopened.snapshot.announcements) == Array(live.announcements))
        #expect(reopened.head == head)
        let third = try await reopened.create(AnnouncementDraft(title: "Third"), by: "alice")
        #expect(third.id == 3, "ids go on from the log")
        await reopened.close()

        let replay = try await place.replay()
        #expect(replay.model.seq == 5)
        #expect(replay.model.announcements.map(\.title) == ["First!", "Third"])
        let report = verify(try await place.lines(), name: place.source)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.sealed == 5)
    }

    @Test("concurrent writers share commits, and every acknowledged write is there after reopening", arguments: Backend.available)
    func groupCommit(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open()
        let writers = 32, each = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for write in 0..<each {
                        _ = try await store.create(AnnouncementDraft(title: "w\(writer)-\(write)"), by: "w\(writer)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let counts = store.appendCounts
        #expect(counts.events == writers * each)
        #expect(counts.batches < counts.events, "concurrent writes go out together")
        await store.close()
        let reopened = try await place.open()
        #expect(reopened.snapshot.count == writers * each)
        #expect(Set(reopened.snapshot.announcements.map(\.title)).count == writers * each)
        await reopened.close()
    }

    @Test("a second writer is refused at once while the first holds the log alone, and opens once it is closed", arguments: Backend.available)
    func oneWriter(_ backend: Backend) async throws {
        // (A log in PostgreSQL opened as `serve` opens it is shared: see SharedLogTests.)
        let place = try backend.makePlace()
        let store = try await place.open(alone: true)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "a")
        do {
            _ = try await place.open(alone: true)
            Issue.record("a second writer opened the log")
        } catch {
            #expect(Self.kind(of: error) == .locked, "\(error)")
        }
        await store.close()
        let second = try await place.open()
        #expect(second.snapshot.count == 1)
        await second.close()
    }

    @Test("history, the feed and past states are read back from the log", arguments: Backend.available)
    func readsBack(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open()
        let created = try await store.create(AnnouncementDraft(title: "Old", body: "<p>a</p>"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: "Other"), by: "alice")
        _ = try await store.update(id: created.id, AnnouncementPatch(title: "New"), by: "bob")
        try await store.delete(id: created.id, by: "carol")
        let lines = try await place.lines()

        #expect(try await store.eventLines(after: 1, limit: 2).map { Array($0) } == Array(lines[1...2]))
        let history = try #require(try await store.history(id: created.id))
        #expect(history.map(\.event.type) == [.created, .edited, .deleted])
        #expect(history.map { Array($0.line) } == [lines[0], lines[2], lines[3]])
        #expect(try await store.announcement(id: created.id, asOf: .seq(3))?.title == "New")
        #expect(try await store.announcement(id: created.id, asOf: .seq(2))?.title == "Old")
        #expect(try await store.announcement(id: created.id, asOf: .seq(4)) == nil)
        // The whole state as it was, at each seq (and past the end: the present).
        let titles = { (point: LogPoint) async throws in try await store.model(asOf: point).model.announcements.map(\.title) }
        #expect(try await titles(.seq(0)) == [])
        #expect(try await titles(.seq(2)) == ["Old", "Other"])
        #expect(try await titles(.seq(3)) == ["New", "Other"])
        #expect(try await titles(.seq(4)) == ["Other"])
        #expect(try await titles(.seq(99)) == store.snapshot.announcements.map(\.title))
        #expect(try await store.model(asOf: .seq(3)).model.seq == 3)
        await store.close()
    }

    @Test("a repeat of a keyed write after reopening gets the first outcome and appends nothing", arguments: Backend.available)
    func idempotentAcrossRestarts(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open()
        let first = try await store.create(AnnouncementDraft(title: "Once"), by: "alice", key: "k-1")
        await store.close()
        let reopened = try await place.open()
        let repeated = try await reopened.create(AnnouncementDraft(title: "Once"), by: "alice", key: "k-1")
        #expect(repeated == first)
        await #expect(throws: StoreError.keyReused(key: "k-1", seq: 1)) {
            try await reopened.create(AnnouncementDraft(title: "Different"), by: "alice", key: "k-1")
        }
        #expect(reopened.lastSeq == 1)
        await reopened.close()
    }

    @Test("a log copied to another backend, line by line, is byte for byte the same and replays the same", arguments: Backend.available, Backend.available)
    func copies(_ from: Backend, _ to: Backend) async throws {
        let source = try from.makePlace()
        let store = try await source.open(seed: [AnnouncementDraft(title: "A", body: "<p>é \\u2028</p>"), AnnouncementDraft(title: "B")])
        _ = try await store.update(id: 1, AnnouncementPatch(body: .set("<p>\"quoted\"</p>")), by: "bob", key: "edit-1")
        await store.close()
        let lines = try await source.lines()

        let destination = try to.makePlace()
        let log = try await destination.openLog()
        var end: Int64 = 0
        for batch in [lines[0...1], lines[2...]] {
            let bytes = batch.flatMap { $0 + [UInt8(ascii: "\n")] }
            end = try bytes.withBytes { try log.appendDurably($0, at: end) }
        }
        log.close()
        #expect(try await destination.lines() == lines)
        let (a, b) = (try await source.replay(), try await destination.replay())
        #expect(Array(a.model.announcements) == Array(b.model.announcements))
        #expect(a.lastHash == b.lastHash)
    }

    @Test("a log emptied by its writer (an import that failed, undone) holds no line, durably, and takes lines at 0 again", arguments: Backend.available)
    func emptied(_ backend: Backend) async throws {
        let place = try backend.makePlace()
        let store = try await place.open(seed: [AnnouncementDraft(title: "A"), AnnouncementDraft(title: "B")])
        await store.close()
        let lines = try await place.lines()
        #expect(lines.count == 2)
        let log = try await place.openLog()
        #expect(log.durableEnd > 0)
        try log.removeAll()
        #expect(log.durableEnd == 0)
        #expect(try await place.lines().isEmpty)
        _ = try (lines[0] + [UInt8(ascii: "\n")]).withBytes { try log.appendDurably($0, at: 0) }
        log.close()
        #expect(try await place.lines() == [lines[0]])
    }

    static func kind(of error: any Error) -> LogError.Kind? {
        if let error = error as? LogError { return error.kind }
        if case .log(let log)? = error as? StoreError { return log.kind }
        return nil
    }
}

/// `verify` of lines as a file would hold them.
func verify(_ lines: [[UInt8]], name: String) -> VerifyReport {
    var verification = LogVerification(path: name)
    for (index, line) in lines.enumerated() {
        verification.check(LogLine(
            number: index + 1, offset: 0, bytes: line[...],
            parsed: Result { () throws(LineProblem) in try EventParser.parse(line) },
            hash: LineHash(link: line), isLast: index == lines.count - 1
        ))
    }
    return verification.report(tail: nil)
}
