import Foundation
import Logging
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// What start-up checks before a store serves a log: the hash chain of every line it reads, a
/// whole last line, and what the snapshot and the head record beside the log say it held.
@Suite struct StartupChecksTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let snapshotsAtClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)

    /// A log of `count` events written by a store: creates, and every third event an edit of
    /// announcement 1.
    func storeLog(_ path: String, events count: Int, snapshots: SnapshotPolicy = .off) async throws {
        let store = try await EventStore.open(path: path, snapshots: snapshots, logger: quiet)
        while store.snapshot.seq < count {
            let seq = store.snapshot.seq + 1
            if seq % 3 == 0 {
                _ = try await store.update(id: 1, AnnouncementPatch(title: "Announcement \(seq), edited"), by: "bob")
            } else {
                _ = try await store.create(AnnouncementDraft(title: "Announcement \(seq)", body: "<p>Body \(seq)</p>"), by: "alice")
            }
        }
        await store.close()
    }

    /// Flips one bit of the first letter of the title on line `number` (its length unchanged).
    func flipTitleBit(onLine number: Int, of path: String) throws {
        var text = try lines(of: path)
        let line = text[number - 1]
        let title = try #require(line.range(of: #""title":"A"#))
        text[number - 1] = line.replacingCharacters(in: line.index(before: title.upperBound)..<title.upperBound, with: "@")
        try write(text, to: path)
    }

    func contents(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    // MARK: - The hash chain

    @Test("a bit flipped in a title on line 29 of 57 (no snapshot) stops start-up naming the line whose prev no longer matches; nothing is written")
    func brokenChainRefused() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 57)
        try flipTitleBit(onLine: 29, of: path)
        let (log, head) = (try contents(path), try contents(HeadRecord.path(forLog: path)))

        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .damaged)
        #expect(error.line == 30)
        #expect(error.description.hasPrefix("\(path):30: the hash chain is broken: `prev` does not match the SHA-256 of line 29"), "\(error)")
        #expect(error.message.contains("--accept-broken-chain"), "the override is named")
        #expect(try contents(path) == log)
        #expect(try contents(HeadRecord.path(forLog: path)) == head)
    }

    @Test("a broken link after the snapshot's line is refused too: the tail start-up reads is checked")
    func brokenChainAfterSnapshot() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 20, snapshots: snapshotsAtClose)
        try await storeLog(path, events: 57)
        #expect((try? SnapshotFile.checkedCoveredSeq(ofSnapshotAt: SnapshotFile.path(forLog: path)).get()) == 20)
        try flipTitleBit(onLine: 29, of: path)

        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, snapshots: snapshotsAtClose, logger: quiet) }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .damaged && error.line == 30, "\(error)")
    }

    @Test("accepted, a broken chain is served as it is, each break a warning naming its line, and writes chain on from the last line")
    func brokenChainAccepted() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 57)
        try flipTitleBit(onLine: 29, of: path)

        let logs = LogCapture()
        let store = try await EventStore.open(path: path, chainCheck: .accept, logger: logs.logger)
        let warnings = logs.entries(containing: "hash chain is broken")
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["log.line"] == "30")
        let altered = try #require(store.snapshot.announcements.first { $0.title.hasPrefix("@nnouncement") })
        #expect(altered.title == "@nnouncement 29", "served as the log holds it")
        _ = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        await store.close()
        let report = try LogReader(path: path).verify()
        #expect(report.problems.map(\.line) == [30], "the one break stays, the new line chains to the last")
    }

    @Test("a last line that ends with its newline but is not JSON stops start-up naming it: it is not set aside, and its seq is not given again", arguments: ["[", "drop"])
    func wholeLastLineNotJSON(damage: String) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 12)
        var text = try lines(of: path)
        text[11] = damage == "[" ? "[" + text[11].dropFirst() : String(text[11].dropLast())
        try write(text, to: path)
        let log = try contents(path)

        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .invalidLine && error.line == 12, "\(error)")
        #expect(error.message.contains("it was written whole"))
        #expect(try contents(path) == log)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.contains(".torn-") })
    }

    // MARK: - The head record

    /// What can happen to a log beside its head record.
    enum Loss: String, CaseIterable, Sendable {
        case emptied, cutBack, removed
    }

    @Test("a log that no longer holds the head recorded beside it is refused, not seeded, and nothing is written; moving the record aside lets it start", arguments: Loss.allCases)
    func headRecordRefusal(loss: Loss) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 57)
        let record = HeadRecord.path(forLog: path)
        let recorded = try #require(LogHead(String(decoding: contents(record), as: UTF8.self).trimmingCharacters(in: .newlines)))
        #expect(recorded.seq == 57)
        switch loss {
        case .emptied: try Data().write(to: URL(fileURLWithPath: path))
        case .cutBack: try write(Array(try lines(of: path).prefix(40)), to: path)
        case .removed: try FileManager.default.removeItem(atPath: path)
        }
        let before = loss == .removed ? nil : try contents(path)

        let failure = await #expect(throws: StoreError.self) {
            try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "Seed")], logger: quiet)
        }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .damaged, "\(error)")
        #expect(error.message.contains("mv \(record) \(record).set-aside"), "how to go on: \(error)")
        switch loss {
        case .emptied, .removed: #expect(error.message.contains("the log is empty, but \(record) records that it held 57 lines"), "\(error)")
        case .cutBack: #expect(error.message.contains("the log ends at seq 40"), "\(error)")
        }
        #expect(loss == .removed ? !FileManager.default.fileExists(atPath: path) : try contents(path) == before, "not seeded, not created")
        #expect(LogHead(String(decoding: try contents(record), as: UTF8.self).trimmingCharacters(in: .newlines)) == recorded)

        try FileManager.default.moveItem(atPath: record, toPath: record + ".set-aside")
        let store = try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "Seed")], logger: quiet)
        await store.close()
    }

    /// Which records beside a log say where it ends, and how the next start-up treats a snapshot.
    enum Records: String, CaseIterable, Sendable {
        /// The head's record alone.
        case head
        /// A snapshot too (written at the last stop), read at start-up.
        case snapshot
        /// A snapshot too, start-up not using snapshots (it still checks the snapshot's last line).
        case snapshotUnused
    }

    @Test("a last line that lost only its newline is refused as that, with the way to mend it, not as a log cut back (whether a snapshot beside it covers the line or not); once mended, it starts with nothing lost", arguments: Records.allCases)
    func lastNewlineLost(records: Records) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 12, snapshots: records == .head ? .off : snapshotsAtClose)
        #expect(FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)) == (records != .head))
        let opening = records == .snapshot ? snapshotsAtClose : .off
        var bytes = try contents(path)
        #expect(bytes.last == UInt8(ascii: "\n"))
        bytes.removeLast()
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, snapshots: opening, logger: quiet) }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .damaged && error.line == 12, "\(error)")
        #expect(error.message.contains("the log ends in line 12 as") && error.message.contains("whole but for its newline") && error.message.contains("printf '\\n' >> \(path)"), "\(error)")
        #expect(!error.message.contains("cut back"), "\(error)")
        #expect(try contents(path) == bytes, "left as it was")
        // Mended as it says.
        try Data(bytes + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: path))
        let store = try await EventStore.open(path: path, snapshots: opening, logger: quiet)
        #expect(store.snapshot.seq == 12)
        await store.close()
    }

    @Test("upgrade refuses a log that start-up refuses as cut back, and leaves it, its head record and its snapshot as they were")
    func upgradeRefusesCutBackLog() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 57, snapshots: snapshotsAtClose)
        let record = HeadRecord.path(forLog: path), snapshot = SnapshotFile.path(forLog: path)
        try write(Array(try lines(of: path).prefix(40)), to: path)
        let before = try [path, record, snapshot].map(contents)
        #expect {
            try LogUpgrade.upgrade(path: path, rules: ValidationRules())
        } throws: { error in
            guard let error = error as? LogError else { return false }
            return error.kind == .damaged
        }
        #expect(try [path, record, snapshot].map(contents) == before, "nothing changed")
    }

    @Test("a log whose lines cannot be synced to disk as it opens is refused, naming it: nothing is recorded of lines that may not last")
    func syncAtOpen() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 3)
        let failure = await #expect(throws: StoreError.self) {
            try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: .withFailingSync { true })
        }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.message.contains("cannot sync the log's lines to disk as it opens") && error.path == path, "\(error)")
    }

    @Test("the last line changed in place: the chain cannot tell (no line after it), the head record can")
    func lastLineChanged() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 56)  // line 56 is a create, titled "Announcement 56"
        try flipTitleBit(onLine: 56, of: path)
        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        guard case .log(let error)? = failure else { Issue.record("not a log's refusal: \(String(describing: failure))"); return }
        #expect(error.kind == .damaged && error.line == 56, "\(error)")
        #expect(error.message.contains("line 56 is not the line \(HeadRecord.path(forLog: path)) records"), "\(error)")
    }

    @Test("the store records its head as it opens (a seeded log too) and as it closes; a log restored with its own record starts")
    func recordsHead() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let record = HeadRecord.path(forLog: path)
        func recorded() throws -> LogHead? { LogHead(String(decoding: try contents(record), as: UTF8.self).trimmingCharacters(in: .newlines)) }
        let store = try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "One"), AnnouncementDraft(title: "Two")], logger: quiet)
        #expect(try recorded() == store.head, "recorded once open, before any write: a crash later leaves it")
        #expect(store.head?.seq == 2)
        _ = try await store.create(AnnouncementDraft(title: "Three"), by: "alice")
        let head = store.head
        await store.close()
        #expect(try recorded() == head)
        #expect(try recorded() == LogReader(path: path).verify().head)

        // A copy of the log and its record (a backup's files), put in place of a longer log.
        let backup = try (contents(path), contents(record))
        try await storeLog(path, events: 9)
        try backup.0.write(to: URL(fileURLWithPath: path))
        try backup.1.write(to: URL(fileURLWithPath: record))
        let restored = try await EventStore.open(path: path, logger: quiet)
        #expect(restored.head == head)
        await restored.close()
    }

    @Test("a head record that is not SEQ:SHA256, or not a file, stops start-up naming it")
    func unreadableRecord() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try await storeLog(path, events: 3)
        try Data("3:not-a-hash\n".utf8).write(to: URL(fileURLWithPath: HeadRecord.path(forLog: path)))
        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        #expect("\(String(describing: failure))".contains("\(HeadRecord.path(forLog: path)): the head recorded beside the log is not `SEQ:SHA256`"))
        // A folder in its place is named as the head record, not as the log.
        try FileManager.default.removeItem(atPath: HeadRecord.path(forLog: path))
        try FileManager.default.createDirectory(atPath: HeadRecord.path(forLog: path), withIntermediateDirectories: false)
        let folderThere = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        #expect("\(String(describing: folderThere))".contains("\(HeadRecord.path(forLog: path)): the head recorded beside the log is not a file (a folder, or another kind of entry): move it out of the way (mv "), "\(String(describing: folderThere))")
    }
}
