import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A log file changed under a running server (restored over it, replaced, cut): the server stops
/// writing, says why, and leaves the file as it found it.
@Suite struct ChangedLogTests {
    enum Change: String, CaseIterable {
        case replaced, cut, removed
    }

    /// A store (snapshots at close) on a log of three events in `folder`, and that log `change`d
    /// under it; returns the store and the log's path.
    func storeWithLog(_ change: Change, in folder: TemporaryFolder) async throws -> (EventStore, String) {
        let path = folder.file("log.jsonl")
        let snapshots = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)
        let store = try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "One"), AnnouncementDraft(title: "Two")], snapshots: snapshots, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = try await store.create(AnnouncementDraft(title: "Three"), by: "alice")
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        switch change {
        case .replaced:
            // What `cp backup/log.jsonl .` through a temporary file and a rename does.
            try write(Array(lines.prefix(2)), to: path + ".new")
            #expect(rename(path + ".new", path) == 0)
        case .cut:
            #expect(truncate(path, off_t(lines[0].utf8.count + 1)) == 0)
        case .removed:
            #expect(unlink(path) == 0)
        }
        return (store, path)
    }

    @Test("a log replaced, cut or removed under a store that wrote nothing since: its close writes no snapshot over the one restored beside it", arguments: Change.allCases)
    func closeAfterChange(_ change: Change) async throws {
        let folder = TemporaryFolder()
        let (store, path) = try await storeWithLog(change, in: folder)
        // What a restore puts beside the log: its own snapshot.
        let restored = Data("the restored snapshot".utf8)
        try restored.write(to: URL(fileURLWithPath: SnapshotFile.path(forLog: path)))
        await store.close()
        #expect(FileManager.default.contents(atPath: SnapshotFile.path(forLog: path)) == restored)
    }

    @Test("a write after the log was replaced, cut or removed fails as unusable, and nothing is written", arguments: Change.allCases)
    func changed(_ change: Change) async throws {
        let folder = TemporaryFolder()
        let (store, path) = try await storeWithLog(change, in: folder)
        let after = FileManager.default.contents(atPath: path)
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Four"), by: "alice") }
        #expect(FileManager.default.contents(atPath: path) == after, "the file is left as it was found")
        guard case .unusable(let error) = store.health else {
            Issue.record("health is \(store.health), not unusable")
            await store.close()
            return
        }
        #expect(error.message.hasPrefix("the log changed under the server: "), "\(error.message)")
        #expect(store.health.reason?.hasPrefix("the log is unusable (the log changed under the server: ") == true, "\(store.health.reason ?? "")")
        #expect(store.health.reason?.contains(path) == false, "the reason is /health's, for anyone: it does not say where the log is")
        await store.close()
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)), "no snapshot at close of a state whose log is not there")
    }
}
