import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// Where a new file's name must be durable before the log relies on it (a power loss would
/// otherwise take the file), a folder that cannot be synced stops the step, and nothing is lost.
@Suite struct FolderSyncTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("a new log whose folder cannot be synced is refused before its first line; the next open, able to, syncs it and writes")
    func newLog() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("events/log.jsonl")
        let seed = [AnnouncementDraft(title: "Welcome", body: nil)]
        let failure = await #expect(throws: StoreError.self) {
            try await EventStore.open(path: path, rules: ValidationRules(), seed: seed, logger: quiet, operations: .withFailingFolderSync { true })
        }
        #expect("\(String(describing: failure))".contains("the log is created, but its folder cannot be synced to make its name durable"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "no line written, the seed's included")

        let synced = Mutex(0)
        let counting = FileOperations.withFailingFolderSync { synced.withLock { $0 += 1 }; return false }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: seed, logger: quiet, operations: counting)
        #expect(synced.withLock { $0 } >= 1, "the empty log's folder is synced again, though the file was there")
        #expect(store.snapshot.count == 1)
        await store.close()
    }

    @Test("a torn last line whose side file's name cannot be made durable stays in the log; the next open sets it aside")
    func tornLine() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Canteen menu", body: nil), by: "alice")
        await store.close()
        let torn = #"{"seq":2,"type":"created","id":2,"at":"2026-11-24T10:00:00.000Z","by":"bob","data":{"title":"Par"#
        try appendText(torn, to: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        let failure = await #expect(throws: StoreError.self) {
            try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: .withFailingFolderSync { true })
        }
        #expect("\(String(describing: failure))".contains("but the folder cannot be synced to make that durable, so the line is left in the log"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "the log is not cut")

        let reopened = try await EventStore.open(path: path, logger: quiet)
        #expect(reopened.lastSeq == 1)
        await reopened.close()
        let sides = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".torn-") }
        #expect(!sides.isEmpty)
        for side in sides {
            #expect(try String(contentsOfFile: folder.path + "/" + side, encoding: .utf8) == torn)
        }
    }

    @Test("an erasure whose journal's name cannot be made durable overwrites no line; erasing again, once it can, seals them")
    func erasureJournal() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let failing = Mutex(false)
        let store = try await EventStore.open(
            path: path, rules: ValidationRules(), seed: [], logger: quiet,
            operations: .withFailingFolderSync { failing.withLock { $0 } }
        )
        _ = try await store.create(AnnouncementDraft(title: "Canteen menu", body: nil), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: "Salary review of Jane Roe", body: "<p>123,456</p>"), by: "alice")
        let holdsSecret = { try String(contentsOfFile: path, encoding: .utf8).contains("Jane Roe") }

        failing.withLock { $0 = true }
        let failure = await #expect(throws: StoreError.self) { try await store.erase(id: 2, by: "root", reason: "personal data") }
        #expect("\(String(describing: failure))".contains("the erasure's journal is written, but its folder cannot be synced to make it durable, so no line is overwritten"))
        #expect(try holdsSecret(), "the line is not overwritten without a durable journal")
        #expect(store.snapshot.erased == [2: 3], "the erased event is in the log")

        failing.withLock { $0 = false }
        // Erasing again finishes the erasure made before, and says so.
        #expect(try await store.erase(id: 2, by: "root", reason: "personal data") == EventStore.Erasure(seq: 3, sealedLines: [2], finishedEarlier: true))
        #expect(try !holdsSecret())
        #expect(!FileManager.default.fileExists(atPath: FileLog.journalPath(forLog: path)))
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
    }
}
