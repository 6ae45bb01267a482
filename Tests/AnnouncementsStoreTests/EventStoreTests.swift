import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// A time limit on each test: a write path that lost a wake-up would hang, not fail.
@Suite(.timeLimit(.minutes(5))) struct EventStoreTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("writes created, edited and deleted events that replay to the live state")
    func liveEqualsReplay() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        let first = try await store.create(AnnouncementDraft(title: "First", body: "<p>1</p>"), by: "alice")
        let second = try await store.create(AnnouncementDraft(title: "Second"), by: "alice")
        #expect(first.id == 1)
        #expect(second.id == 2)
        let edited = try await store.update(id: 1, AnnouncementPatch(title: "First!", body: .clear), by: "bob")
        #expect(edited == Announcement(id: 1, title: "First!", body: nil, revision: 3, createdBy: "alice", createdAt: first.createdAt, updatedAt: edited.updatedAt))
        #expect(edited.updatedAt >= first.createdAt)
        try await store.delete(id: 2, by: "carol")
        let third = try await store.create(AnnouncementDraft(title: "Third"), by: "alice")
        #expect(third.id == 3, "ids are never reused")
        let live = store.snapshot
        await store.close()

        let replayed = try LogReader(path: path).replay().model
        #expect(Array(replayed.announcements) == Array(live.announcements))
        #expect(replayed.seq == 5)
        let text = try lines(of: path)
        #expect(text[2].contains(#""type":"edited""#) && text[2].contains(#""data":{"title":"First!","body":null}"#))
        #expect(text[2].contains(#""by":"bob""#))
        #expect(try LogReader(path: path).verify().sealed == 5)
    }

    @Test("refuses invalid writes and unknown ids, appending nothing")
    func refuses() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, rules: ValidationRules(maxBodyBytes: 10), logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "a")
        let before = try lines(of: path)

        await #expect(throws: StoreError.invalid([FieldProblem(field: "title", message: "must not be blank")])) {
            try await store.create(AnnouncementDraft(title: "  \n"), by: "a")
        }
        await #expect(throws: StoreError.invalid([FieldProblem(field: "title", message: "must not be empty")])) {
            try await store.create(AnnouncementDraft(title: ""), by: "a")
        }
        await #expect(throws: StoreError.self) {
            try await store.create(AnnouncementDraft(title: String(repeating: "é", count: 256)), by: "a")
        }
        _ = try await store.create(AnnouncementDraft(title: String(repeating: "é", count: 255)), by: "a")
        await #expect(throws: StoreError.invalid([FieldProblem(field: "body", message: "must be at most 10 bytes (it has 11)")])) {
            try await store.update(id: 1, AnnouncementPatch(body: .set("01234567890")), by: "a")
        }
        await #expect(throws: StoreError.notFound(id: 42)) { try await store.delete(id: 42, by: "a") }
        await #expect(throws: StoreError.revisionMismatch(id: 1, expected: 7, current: 1)) {
            try await store.update(id: 1, AnnouncementPatch(title: "x"), by: "a", expectedRevision: 7)
        }
        #expect(try lines(of: path).count == before.count + 1)
        await store.close()
    }

    @Test("an edit that changes nothing appends nothing")
    func noOpEdit() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Same", body: "b"), by: "a")
        let result = try await store.update(id: 1, AnnouncementPatch(title: "Same", body: .set("b")), by: "a")
        #expect(result.revision == 1)
        let partly = try await store.update(id: 1, AnnouncementPatch(title: "Same", body: .set("c")), by: "a")
        #expect(partly.revision == 2)
        // A canonically equal but different spelling is a change: the log keeps exact bytes.
        _ = try await store.update(id: 1, AnnouncementPatch(title: "Sam\u{E9}"), by: "a")
        let decomposed = try await store.update(id: 1, AnnouncementPatch(title: "Sam\u{65}\u{301}"), by: "a")
        #expect(decomposed.revision == 4)
        #expect(Array(decomposed.title.utf8) == Array("Sam\u{65}\u{301}".utf8))
        await store.close()
        let text = try lines(of: path)
        #expect(text.count == 4)
        #expect(text[1].contains(#""data":{"body":"c"}"#), "only the changed field is written")
    }

    @Test("a second writer on the same log fails at once")
    func lock() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        await #expect {
            try await EventStore.open(path: path, logger: quiet)
        } throws: { error in
            guard case .log(let log) = error as? StoreError else { return false }
            return log.kind == .locked && log.message.contains("another process is writing")
        }
        await store.close()
        let again = try await EventStore.open(path: path, logger: quiet)
        await again.close()
    }

    @Test("closing the log releases its lock even while a child process still shares the open file")
    func lockReleasedDespiteSharedFile() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let log = try FileLog(path: path)
        // A program started by this process shares the open file until it runs: a copy of the
        // descriptor stands in for it.
        let childsCopy = dup(log.fd)
        try #require(childsCopy >= 0)
        defer { close(childsCopy) }
        log.close()
        let reopened = try FileLog(path: path)
        reopened.close()
    }

    @Test("one writer at a time: each write starts the committer at most once, which syncs it on its own thread; nothing wakes it")
    func loneWriter() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        for note in 0..<20 {
            _ = try await store.create(AnnouncementDraft(title: "n\(note)"), by: "alice")
        }
        let handOvers = store.pipeline.state.withLock { $0.handOvers }
        // A write the answered writer sends before the committer has stopped is taken by it as it
        // runs: no start for that one.
        #expect((1...20).contains(handOvers.starts))
        #expect(handOvers.wakes == 0, "a lone writer's committer never waits")
        #expect(store.appendCounts == (20, 20), "one sync each")
        await store.close()
    }

    @Test("many concurrent writers share syncs, and every acknowledged write is there after reopening")
    func groupCommit() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        let acknowledged = try await withThrowingTaskGroup(of: [Int].self) { group in
            for writer in 0..<64 {
                group.addTask {
                    var ids: [Int] = []
                    for note in 0..<20 {
                        ids.append(try await store.create(AnnouncementDraft(title: "w\(writer) n\(note)"), by: "w\(writer)").id)
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let (batches, events) = store.appendCounts
        await store.close()
        #expect(Set(acknowledged).count == 1280)
        #expect(events == 1280)
        #expect(batches < events, "concurrent writes share syncs (\(batches) syncs for \(events) events)")
        let handOvers = store.pipeline.state.withLock { $0.handOvers }
        #expect(handOvers.starts + handOvers.wakes < events, "the committer is started or woken for several writes at a time (\(handOvers))")

        let reopened = try await EventStore.open(path: path, logger: quiet)
        let model = reopened.snapshot
        await reopened.close()
        #expect(model.count == 1280)
        #expect(acknowledged.allSatisfy { model.announcement(id: $0) != nil })
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("a log whose failed append cannot be undone refuses further writes until restarted")
    func unusable() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var operations = FileOperations.system
        operations.sync = { _ in errno = EIO; return -1 }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        // The write that failed says its outcome is unknown: its line could not be cut back off, and
        // a restart may find it.
        await #expect {
            try await store.create(AnnouncementDraft(title: "A"), by: "a")
        } throws: { error in
            guard case .log(let log) = error as? StoreError else { return false }
            return log.kind == .unusable && log.message.contains("whether these writes are in it is unknown") && log.message.contains("Idempotency-Key")
        }
        await #expect {
            try await store.create(AnnouncementDraft(title: "B"), by: "a")
        } throws: { error in
            guard case .log(let log) = error as? StoreError else { return false }
            return log.kind == .unusable && log.message.contains("restart")
        }
        #expect(store.snapshot.count == 0)
        await store.close()
    }

    @Test("a failed write or sync fails the batch, leaves no partial line and keeps the old state", arguments: ["write", "sync"])
    func failedSync(failing: String) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let fail = Mutex(false)
        var operations = FileOperations.system
        let system = FileOperations.system
        operations.write = { fd, bytes, offset in
            guard fail.withLock({ $0 }), failing == "write" else { return system.write(fd, bytes, offset) }
            // Half the bytes reach the file, then the disk is full.
            _ = system.write(fd, UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)]), offset)
            errno = ENOSPC
            return -1
        }
        operations.sync = { fd in
            // One sync fails (a transient device error); the store's own undo then syncs fine.
            guard failing == "sync", fail.withLock({ failing in defer { failing = false }; return failing }) else {
                return system.sync(fd)
            }
            errno = EIO
            return -1
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "a")
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int

        fail.withLock { $0 = true }
        await #expect {
            try await store.create(AnnouncementDraft(title: "Lost", body: String(repeating: "x", count: 5000)), by: "a")
        } throws: { error in
            guard case .log(let log) = error as? StoreError else { return false }
            return log.kind == .writeFailed && (failing == "sync" || log.message.contains("the disk is full"))
        }
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int == sizeBefore)
        #expect(store.snapshot.count == 1)
        #expect(store.snapshot.seq == 1)

        fail.withLock { $0 = false }
        let after = try await store.create(AnnouncementDraft(title: "After"), by: "a")
        #expect(after.id == 2, "the failed create did not use up an id")
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
        #expect(try lines(of: path).count == 2)
    }

    @Test("a failed sync fails every answer of its batch decided on the lines it held: an edit that changed nothing after another made it, a second delete")
    func failedSyncFailsWhatReadItsLines() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let fail = Mutex(false)
        let operations = FileOperations.withFailingSync { fail.withLock { failing in defer { failing = false }; return failing } }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        _ = try await store.create(AnnouncementDraft(title: "Old"), by: "a")
        _ = try await store.create(AnnouncementDraft(title: "Other"), by: "a")

        fail.withLock { $0 = true }
        // One batch: a no-op edit of 2 first (decided on durable state), then two edits of 1 to the
        // same title, and two deletes of 2.
        let outcomes = await store.submit([
            WriteRequest(action: .update(id: 2, AnnouncementPatch(title: "Other")), by: "a"),
            WriteRequest(action: .update(id: 1, AnnouncementPatch(title: "New")), by: "a"),
            WriteRequest(action: .update(id: 1, AnnouncementPatch(title: "New")), by: "b"),
            WriteRequest(action: .delete(id: 2), by: "a"),
            WriteRequest(action: .delete(id: 2), by: "b"),
        ])
        #expect(outcomes.count == 5)
        if case .success(let unchanged) = outcomes[0] {
            #expect(unchanged?.title == "Other", "decided before the batch's first line: it stands")
        } else {
            Issue.record("the edit that changed nothing on durable state failed: \(outcomes[0])")
        }
        for (index, outcome) in outcomes.enumerated().dropFirst() {
            guard case .failure(.log(let log)) = outcome else {
                Issue.record("request \(index) was answered from lines that never became durable: \(outcome)")
                continue
            }
            #expect(log.kind == .writeFailed)
        }
        #expect(store.snapshot.announcement(id: 1)?.title == "Old")
        #expect(store.snapshot.announcement(id: 2) != nil)
        await store.close()
    }

    @Test("under concurrent writers, a failed sync loses exactly the writes it failed, and nothing else")
    func failedSyncUnderLoad() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let syncs = Mutex(0)
        var operations = FileOperations.system
        let system = FileOperations.system
        operations.sync = { fd in
            // The fifth sync fails (480 writes by 32 writers need at least 15); the others work.
            let count = syncs.withLock { count in count += 1; return count }
            if count == 5 { errno = EIO; return -1 }
            return system.sync(fd)
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        let outcomes = await withTaskGroup(of: [(String, Bool)].self) { group in
            for writer in 0..<32 {
                group.addTask {
                    var outcomes: [(String, Bool)] = []
                    for note in 0..<15 {
                        let title = "w\(writer) n\(note)"
                        do {
                            _ = try await store.create(AnnouncementDraft(title: title), by: "w\(writer)")
                            outcomes.append((title, true))
                        } catch {
                            outcomes.append((title, false))
                        }
                    }
                    return outcomes
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        let live = store.snapshot
        await store.close()
        let acknowledged = Set(outcomes.filter(\.1).map(\.0))
        #expect(acknowledged.count < 480, "some writes failed")
        #expect(acknowledged.count > 0)
        let replayed = try LogReader(path: path).replay().model
        #expect(Set(replayed.announcements.map(\.title)) == acknowledged, "the log holds exactly the acknowledged writes")
        #expect(Array(replayed.announcements) == Array(live.announcements))
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("seeds an empty log, and never a non-empty one")
    func seeds() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let seed = [AnnouncementDraft(title: "One", body: "<p>1</p>"), AnnouncementDraft(title: "Two")]
        let store = try await EventStore.open(path: path, seed: seed, logger: quiet)
        #expect(store.snapshot.announcements(PageQuery()).items.map(\.title) == ["One", "Two"])
        #expect(store.appendCounts == (batches: 1, events: 2), "the seed is written with one write and one sync")
        try await store.delete(id: 1, by: "a")
        await store.close()
        let text = try lines(of: path)
        #expect(text[0].contains(#""by":"seed""#))

        let reopened = try await EventStore.open(path: path, seed: seed, logger: quiet)
        #expect(reopened.snapshot.count == 1)
        #expect(reopened.snapshot.seq == 3)
        await reopened.close()
    }

    @Test("an invalid seed fails the opening and names the seed")
    func invalidSeed() async throws {
        let folder = TemporaryFolder()
        await #expect(throws: StoreError.invalid([FieldProblem(field: "seed[1].title", message: "must not be blank")])) {
            try await EventStore.open(path: folder.file("log.jsonl"), seed: [AnnouncementDraft(title: "ok"), AnnouncementDraft(title: " ")], logger: quiet)
        }
    }

    @Test("moves a torn last line into a side file and goes on")
    func recoversTornTail() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        let fragment = #"{"seq":8,"type":"created","id":4,"at":"2026"#
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(fragment.utf8))
        try handle.close()

        let store = try await EventStore.open(path: path, logger: quiet)
        #expect(store.snapshot.seq == 7)
        let next = try await store.create(AnnouncementDraft(title: "After the crash"), by: "a")
        #expect(next.id == 4)
        await store.close()

        let side = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("log.jsonl.torn-") }
        #expect(side.count == 1)
        #expect(try String(contentsOfFile: folder.file(side[0]), encoding: .utf8) == fragment)
        #expect(try lines(of: path).count == 8)
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("the store's head is its last durable line and its hash, the head verify finds in the log, also after reopening; its seq moves with it")
    func head() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var store = try await EventStore.open(path: path, logger: quiet)
        #expect(store.head == nil, "an empty log has no head")
        #expect(store.seq == 0)
        _ = try await store.create(AnnouncementDraft(title: "A"), by: "a")
        #expect(store.seq == 1, "the published seq, read without the state's lock, moves with the state")
        _ = try await store.update(id: 1, AnnouncementPatch(title: "B"), by: "a")
        _ = try await store.update(id: 1, AnnouncementPatch(title: "B"), by: "a")  // changes nothing, appends nothing
        #expect(store.seq == 2 && store.snapshot.seq == 2)
        let head = try #require(store.head)
        #expect(head == LogHead(seq: 2, hash: LineHash(link: Array(try lines(of: path)[1].utf8))))
        #expect(try LogReader(path: path).verify().head == head)
        await store.close()
        store = try await EventStore.open(path: path, logger: quiet)
        #expect(store.head == head)
        #expect(store.seq == 2, "and from the log replayed")
        await store.close()
    }

    @Test("health: failing after a failed sync, ok again once a write succeeds, closed once closed")
    func healthAfterFailedSync() async throws {
        let folder = TemporaryFolder()
        let fail = Mutex(false)
        // One sync fails; the store's undo then syncs fine.
        let operations = FileOperations.withFailingSync { fail.withLock { failing in defer { failing = false }; return failing } }
        let store = try await EventStore.open(path: folder.file("log.jsonl"), rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        #expect(store.health == .ok)
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "a")
        #expect(store.health == .ok)
        fail.withLock { $0 = true }
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Lost"), by: "a") }
        guard case .failing(let error) = store.health else {
            Issue.record("health is \(store.health) after a failed sync")
            return
        }
        #expect(error.kind == .writeFailed)
        #expect(store.health.reason?.hasPrefix("the last write to the log failed (") == true)
        #expect(store.health.reason?.contains("cannot sync the log to disk") == true)
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "a")
        #expect(store.health == .ok)
        await store.close()
        #expect(store.health == .closed)
    }

    @Test("health: unusable after a failed write that could not be undone, whatever comes after")
    func healthWhenUnusable() async throws {
        let folder = TemporaryFolder()
        let operations = FileOperations.withFailingSync { true }
        let store = try await EventStore.open(path: folder.file("log.jsonl"), rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "A"), by: "a") }
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "B"), by: "a") }
        guard case .unusable(let error) = store.health else {
            Issue.record("health is \(store.health) after a failed undo")
            return
        }
        #expect(error.kind == .unusable && error.message.contains("cannot sync the log to disk") && error.message.contains("could not be cut back"), "the first failure stays the reason")
        #expect(store.health.reason?.contains("restart the server") == true)
        await store.close()
        #expect(!store.health.isOK)
    }

    @Test("readers keep their snapshot while writes go on, and the store refuses writes once closed")
    func snapshotsAndClose() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "A"), by: "a")
        let snapshot = store.snapshot
        _ = try await store.create(AnnouncementDraft(title: "B"), by: "a")
        #expect(snapshot.count == 1)
        #expect(store.snapshot.count == 2)
        await store.close()
        await #expect(throws: StoreError.closed) { try await store.create(AnnouncementDraft(title: "C"), by: "a") }
    }
}
