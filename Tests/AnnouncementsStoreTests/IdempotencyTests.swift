import Dispatch
import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// A time limit on each test: a write path that lost a wake-up would hang, not fail.
@Suite(.timeLimit(.minutes(5))) struct IdempotencyTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("a key is stored in its event, after `by`, and read back")
    func keyInTheLine() throws {
        var event = created(1, id: 1, "Hi")
        event.key = "7f9c-retry"
        event.format = Event.currentFormat
        let salt = Array(String(repeating: "5a", count: 32).utf8).withUnsafeBytes { Salt(hex: $0) }
        let line = String(decoding: event.encodedLine(salt: salt), as: UTF8.self)
        #expect(line.contains(#""by":"alice","idempotency_key":"7f9c-retry","data":"#))
        #expect(try EventParser.parse(Array(line.utf8)) == event)
        #expect(throws: LineProblem.self) { try EventParser.parse(Array(line.replacing("7f9c-retry", with: "").utf8)) }
    }

    @Test("a repeat of a keyed write appends nothing and gets the first outcome, also after a restart")
    func repeats() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var store = try await EventStore.open(path: path, logger: quiet)
        let draft = AnnouncementDraft(title: "Fire drill", body: "<p>10:00</p>")
        let first = try await store.create(draft, by: "alice", key: "k1")
        let again = try await store.create(draft, by: "alice", key: "k1")
        #expect(again == first)
        let edited = try await store.update(id: first.id, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "k2")
        let editedAgain = try await store.update(id: first.id, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "k2")
        #expect(editedAgain == edited)
        #expect(store.snapshot.seq == 2)
        await store.close()

        store = try await EventStore.open(path: path, logger: quiet)
        #expect(try await store.create(draft, by: "alice", key: "k1") == first)
        await #expect(throws: StoreError.keyReused(key: "k1", seq: nil), "after a restart too, a key is its writer's, and another writer does not learn which event used it") {
            try await store.create(draft, by: "bob", key: "k1")
        }
        // The stored event holds only what changed; a field set as it was before the first
        // request still counts as the same request.
        let editedAfterRestart = try await store.update(id: first.id, AnnouncementPatch(title: "Fire drill moved", body: .set("<p>10:00</p>")), by: "alice", key: "k2")
        #expect(editedAfterRestart == edited)
        try await store.delete(id: first.id, by: "alice", key: "k3")
        try await store.delete(id: first.id, by: "alice", key: "k3")
        #expect(store.snapshot.seq == 3)
        // The created announcement is gone, but a repeat of its creation still answers as the first did.
        #expect(try await store.create(draft, by: "alice", key: "k1") == first)
        await store.close()
        #expect(try lines(of: path).count == 3)
        #expect(try lines(of: path)[0].contains(#""idempotency_key":"k1""#))
    }

    @Test("a repeated keyed edit appends nothing, even after another edit changed the announcement back")
    func editRepeatAfterAnotherEdit() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var store = try await EventStore.open(path: path, logger: quiet)
        let id = try await store.create(AnnouncementDraft(title: "Fire drill"), by: "alice").id
        _ = try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "e1")
        _ = try await store.update(id: id, AnnouncementPatch(title: "Fire drill"), by: "bob")
        // Without its key this would be a change again (and append); with it, it is the first one's repeat.
        let repeated = try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "e1")
        #expect(repeated.title == "Fire drill", "a repeat answers with the announcement as it is now")
        #expect(store.snapshot.seq == 3)
        await store.close()

        store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "e1")
        #expect(store.snapshot.seq == 3, "after a restart too")
        await #expect(throws: StoreError.keyReused(key: "e1", seq: 2)) {
            try await store.update(id: id, AnnouncementPatch(title: "Fire drill cancelled"), by: "alice", key: "e1")
        }
        await store.close()
    }

    @Test("the same key with a different request is refused, naming the key and its event")
    func reused() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice", key: "k")
        await #expect(throws: StoreError.keyReused(key: "k", seq: 1)) {
            try await store.create(AnnouncementDraft(title: "Two"), by: "alice", key: "k")
        }
        await #expect(throws: StoreError.keyReused(key: "k", seq: 1)) {
            try await store.delete(id: 1, by: "alice", key: "k")
        }
        // An edit's event holds only what changed (here the body); a title other than the one the
        // announcement had before the first request is another request.
        _ = try await store.update(id: 1, AnnouncementPatch(title: "One", body: .set("x")), by: "alice", key: "e")
        await #expect(throws: StoreError.keyReused(key: "e", seq: 2)) {
            try await store.update(id: 1, AnnouncementPatch(title: "Other", body: .set("x")), by: "alice", key: "e")
        }
        await #expect(throws: StoreError.keyReused(key: "e", seq: nil), "another writer's key, and no word of its event") {
            try await store.update(id: 1, AnnouncementPatch(title: "One", body: .set("x")), by: "bob", key: "e")
        }
        #expect(store.snapshot.seq == 2)
        await store.close()
    }

    @Test("a repeated edit is compared by the change it asks for on the announcement as it was before the first: the same answer once it is durable and after a restart, after edits since", arguments: [false, true])
    func editRepeatsByTheirChange(restart: Bool) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var store = try await EventStore.open(path: path, seed: [], logger: quiet)
        let id = try await store.create(AnnouncementDraft(title: "Fire drill", body: "<p>10:00</p>"), by: "alice").id
        _ = try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved"), by: "bob")
        // The title was already so: the event holds the body alone.
        let first = try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved", body: .set("<p>11:00</p>")), by: "alice", key: "e")
        _ = try await store.update(id: id, AnnouncementPatch(title: "Fire drill cancelled", body: .set("<p>12:00</p>")), by: "bob")
        if restart {
            await store.close()
            store = try await EventStore.open(path: path, seed: [], logger: quiet)
        }
        let now = try #require(store.snapshot.announcement(id: id))
        // The same change: with the title as it was just before (not as it was created), or without it.
        #expect(try await store.update(id: id, AnnouncementPatch(title: "Fire drill moved", body: .set("<p>11:00</p>")), by: "alice", key: "e") == now)
        #expect(try await store.update(id: id, AnnouncementPatch(body: .set("<p>11:00</p>")), by: "alice", key: "e") == now)
        // Another change: a title it had at its creation, or has now, another body, a cleared
        // body, no body.
        for patch in [
            AnnouncementPatch(title: "Fire drill", body: .set("<p>11:00</p>")), AnnouncementPatch(title: "Fire drill cancelled", body: .set("<p>11:00</p>")),
            AnnouncementPatch(title: "Fire drill moved", body: .set("<p>12:00</p>")), AnnouncementPatch(title: "Fire drill moved", body: .clear),
            AnnouncementPatch(title: "Fire drill moved"),
        ] {
            await #expect(throws: StoreError.keyReused(key: "e", seq: first.revision), "\(patch)") {
                try await store.update(id: id, patch, by: "alice", key: "e")
            }
        }
        #expect(store.snapshot.seq == 4)
        await store.close()
    }

    @Test("concurrent repeats of one keyed write (a create, an edit) append it once")
    func concurrentRepeats() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        let ids = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask { try await store.create(AnnouncementDraft(title: "Once"), by: "alice", key: "same").id }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(ids == [1])
        #expect(store.snapshot.seq == 1)
        // An edit that sets the title as it was, repeated while the first is in hand (in its batch
        // or one not yet durable): each is compared by its change on the announcement before it.
        let edited = try await withThrowingTaskGroup(of: Announcement.self) { group in
            for _ in 0..<20 {
                group.addTask { try await store.update(id: 1, AnnouncementPatch(title: "Once", body: .set("<p>b</p>")), by: "alice", key: "edit") }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1.revision) }
        }
        #expect(edited == [2])
        #expect(store.snapshot.seq == 2)
        await store.close()
    }

    @Test("repeats of a keyed write that fails with its batch fail too: no success without an event in the log")
    func repeatsFailWithTheirBatch() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let failNext = Mutex(false)
        var operations = FileOperations.system
        let system = FileOperations.system
        operations.sync = { fd in
            guard failNext.withLock({ fail in defer { fail = false }; return fail }) else { return system.sync(fd) }
            errno = EIO
            return -1
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        _ = try await store.create(AnnouncementDraft(title: "Before"), by: "alice")
        failNext.withLock { $0 = true }
        let outcomes = await withTaskGroup(of: Announcement?.self) { group in
            for _ in 0..<8 {
                group.addTask { try? await store.create(AnnouncementDraft(title: "Retried"), by: "alice", key: "k") }
            }
            return await group.reduce(into: [Announcement?]()) { $0.append($1) }
        }
        // Queued together, so surely one batch: the first makes the event, the rest repeat it; the
        // sync fails, and so must every one of them.
        failNext.withLock { $0 = true }
        let together = await store.submit((0..<8).map { _ in
            WriteRequest(action: .create(AnnouncementDraft(title: "Together")), by: "alice", key: "k2")
        })
        #expect(together.count == 8)
        #expect(together.allSatisfy { if case .failure(.log) = $0 { true } else { false } }, "\(together)")
        await store.close()
        #expect(try !lines(of: path).contains { $0.contains(#""idempotency_key":"k2""#) })
        #expect(outcomes.contains { $0 == nil }, "the failed sync failed some of them")
        let logged = try lines(of: path).filter { $0.contains(#""idempotency_key":"k""#) }
        #expect(logged.count <= 1, "the key made at most one event")
        for case let announcement? in outcomes {
            #expect(logged.count == 1 && logged[0].contains(#""id":\#(announcement.id),"#), "a success is in the log")
        }
    }

    @Test("when one sync holds several batches and fails, a repeat in a later batch fails too")
    func repeatInALaterBatchOfAFailedSync() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let syncs = Atomic(0)
        let inFirstSync = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        var operations = FileOperations.system
        let system = FileOperations.system
        operations.sync = { fd in
            switch syncs.add(1, ordering: .relaxed).newValue {
            case 1:
                inFirstSync.signal()
                release.wait()
            case 2:
                errno = EIO
                return -1
            default:
                break
            }
            return system.sync(fd)
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        // The first sync runs on the syncer's thread, not the committer's: the committer goes on.
        store.syncsInline.store(false, ordering: .relaxed)
        async let first = store.create(AnnouncementDraft(title: "First"), by: "alice")
        await waitOffPool(inFirstSync)

        // While the first sync runs, two batches are handed over: one makes the key's event, the
        // next repeats it. The second sync takes both, and fails.
        func handedOver(beyond end: Int64) async throws {
            // (2 minutes only stop a test that hangs: no busy machine takes that long.)
            let deadline = ContinuousClock.now + .seconds(120)
            while store.syncer.end <= end {
                guard ContinuousClock.now < deadline else { Issue.record("no batch was handed over beyond byte \(end)"); return }
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        let afterFirst = store.syncer.end
        async let made = store.submit([WriteRequest(action: .create(AnnouncementDraft(title: "Keyed")), by: "alice", key: "k")])
        try await handedOver(beyond: afterFirst)
        let afterMade = store.syncer.end
        async let repeated = store.submit([
            WriteRequest(action: .create(AnnouncementDraft(title: "Keyed")), by: "alice", key: "k"),
            WriteRequest(action: .create(AnnouncementDraft(title: "Other")), by: "bob"),
        ])
        try await handedOver(beyond: afterMade)
        release.signal()

        _ = try await first
        let outcomes = await made + repeated
        #expect(outcomes.count == 3)
        #expect(outcomes.allSatisfy { if case .failure(.log) = $0 { true } else { false } }, "\(outcomes)")
        #expect(store.snapshot.count == 1)
        let again = try await store.create(AnnouncementDraft(title: "Keyed"), by: "alice", key: "k")
        await store.close()
        #expect(again.id == 2, "the key's first event was lost with the sync, so this one is made anew")
        #expect(try lines(of: path).count == 2)
    }

    @Test("a cut back never lengthens the file, even to an offset an earlier cut removed")
    func cutBackNeverExtends() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let log = try FileLog(path: path, operations: .system)
        _ = try Array("{\"a\":1}\n".utf8).withBytes(log.write)
        log.markDurable(upTo: 8)
        _ = try Array("{\"b\":2}\n{\"c\":3}\n".utf8).withBytes(log.write)
        log.cutBack(to: 8)
        log.cutBack(to: 16)
        log.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"a\":1}\n", "no zero bytes after the last line")
    }
}
