import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// Erasure: the texts go from every file the store keeps, the chain still proves every line.
@Suite struct ErasureTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let atClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)

    /// What an erased announcement held, each version: no byte of any may be left.
    static let secrets = [
        "Salary review of Jane Roe", "Jane Roe earns 123,456 a year", "Salary review of J. Roe (corrected)",
        "<p>Corrected: 124,000</p>", "123,456", "124,000", "Jane Roe",
    ]

    /// Every file in `folder`, with its bytes.
    func files(in folder: String) throws -> [(name: String, bytes: Data)] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { ($0, try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0))) }
    }

    /// A store in `folder` with announcement 2 holding the secrets in two versions (the second
    /// deleted later), around others that stay; a snapshot of it taken while 2 was live, and a
    /// torn line about 2 set aside beside the log.
    func logWithSecrets(in folder: TemporaryFolder) async throws -> String {
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Canteen menu", body: "<p>Soup</p>"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: Self.secrets[0], body: "<p>\(Self.secrets[1])</p>"), by: "alice")
        _ = try await store.update(id: 2, AnnouncementPatch(title: Self.secrets[2], body: .set(JSONText(Self.secrets[3]))), by: "bob")
        _ = try await store.create(AnnouncementDraft(title: "Parking", body: nil), by: "bob")
        await store.close()
        #expect(FileManager.default.fileExists(atPath: path + ".snapshot"), "the snapshot holds announcement 2 while it is live")
        // A write torn by a crash: the next open sets it aside beside the log.
        let torn = #"{"seq":5,"type":"edited","id":2,"at":"2026-11-24T10:00:00.000Z","by":"bob","data":{"title":"Salary review of Jane Roe, again"#
        try appendText(torn, to: path)
        return path
    }

    @Test("an erasure by an empty or spaced writer, or for a blank reason, is refused before anything is written: the log's reader would refuse its line", arguments: [
        ("", "reason", "by"), ("two words", "reason", "by"), ("root", " ", "reason"), ("root", "a\u{7}b", "reason"),
    ])
    func erasureWriterAndReasonChecked(writer: String, reason: String, field: String) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Stays"), by: "alice")
        let failure = await #expect(throws: StoreError.self) { try await store.erase(id: 1, by: writer, reason: reason) }
        guard case .invalid(let problems) = failure else {
            Issue.record("not refused as invalid: \(String(describing: failure))")
            await store.close()
            return
        }
        #expect(problems.map(\.field) == [field])
        #expect(store.snapshot.seq == 1)
        #expect(store.snapshot.announcement(id: 1)?.title == "Stays")
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("an erasure overwrites and syncs through a descriptor of its own, not the writer's: a sync of its lines must not take the report of a failed write-back of the writer's")
    func erasureSyncsItsOwnDescriptor() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let synced = Mutex<[Int32]>([])
        var operations = FileOperations.system
        operations.sync = { fd in
            synced.withLock { $0.append(fd) }
            return FileOperations.system.sync(fd)
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        _ = try await store.create(AnnouncementDraft(title: "Secret"), by: "alice")
        let writer = try #require(store.log as? FileLog).fd
        synced.withLock { $0.removeAll() }
        _ = try await store.erase(id: 1, by: "root", reason: "asked")
        let descriptors = synced.withLock { $0 }
        #expect(descriptors.contains(writer), "the erased event's line, by the syncer")
        #expect(descriptors.contains { $0 != writer }, "the overwrite's sync, on its own descriptor")
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("after an erasure no byte of any version of the texts is in any file of the folder; verify passes; the skeleton and the erasure are in the log")
    func erasesEverywhere() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSecrets(in: folder)
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        #expect(try files(in: folder.path).contains { $0.name.contains(".torn-") }, "the torn line was set aside")
        // Those that keep texts elsewhere are told, with the state readers get from then on.
        let told = Mutex<[(ids: [Int], seq: Int, published: Int)]>([])
        store.whenErased { ids, seq in told.withLock { $0.append((ids, seq, store.snapshot.seq)) } }
        let erasure = try await store.erase(id: 2, by: "root", reason: "personal data")
        #expect(erasure.sealedLines == [2, 3])
        #expect(erasure.seq == 5)
        #expect(told.withLock { $0.map { "\($0.ids) \($0.seq) \($0.published)" } } == ["[2] 5 5"], "once, for the erasure alone")
        #expect(store.snapshot.announcement(id: 2) == nil)
        await #expect(throws: StoreError.erased(id: 2, seq: 5)) { try await store.announcement(id: 2, asOf: .seq(3)) }
        await #expect(throws: StoreError.erased(id: 2, seq: 5)) { try await store.erase(id: 2, by: "root", reason: "again") }
        // The feed and history show the skeleton.
        let history = try #require(try await store.history(id: 2))
        #expect(history.map(\.event.type) == [.created, .edited, .erased])
        #expect(history.map(\.event.by) == ["alice", "bob", "root"])
        #expect(history.last?.event.change == .erased(reason: "personal data"))
        await store.close()

        for (name, bytes) in try files(in: folder.path) {
            for secret in Self.secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) still holds \"\(secret)\"")
            }
        }
        let report = try LogReader(path: path).verify()
        #expect(report.isSound, "\(report.problems)")
        #expect(report.erasedLines == 2)
        #expect(report.sealed == 5, "every line's place in the chain is proven")
        let again = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        #expect(Array(again.snapshot.announcements).map(\.title) == ["Canteen menu", "Parking"])
        #expect(again.snapshot.erased == [2: 5])
        await again.close()
    }

    @Test(
        "a snapshot from before an erasure that the erasure did not delete (a copy put back, one beside another path to the log) is deleted at the next start, which serves the state after the erasure, whether that start reads snapshots or not",
        arguments: [true, false]
    )
    func snapshotFromBeforeErasureDeletedAtStart(readsSnapshots: Bool) async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSecrets(in: folder)
        let snapshotPath = SnapshotFile.path(forLog: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshotPath))
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.erase(id: 2, by: "root", reason: "personal data")
        await store.close()
        #expect(!FileManager.default.fileExists(atPath: snapshotPath), "the erasure deleted it")
        // The copy that escaped: its tagged line is still in the log (sealing keeps each line's link).
        try before.write(to: URL(fileURLWithPath: snapshotPath))

        let logs = LogCapture()
        let again = try await EventStore.open(path: path, snapshots: readsSnapshots ? atClose : .off, logger: logs.logger)
        #expect(logs.entries(containing: "loaded the snapshot").count == (readsSnapshots ? 1 : 0), "it is usable: the state after the erasure is right")
        #expect(logs.entries(containing: "deleted the snapshot").count == 1)
        #expect(!FileManager.default.fileExists(atPath: snapshotPath), "gone before the store serves")
        #expect(again.snapshot.announcement(id: 2) == nil)
        #expect(again.snapshot.erased == [2: 5])
        await again.close()
        for (name, bytes) in try files(in: folder.path) {
            for secret in Self.secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) still holds \"\(secret)\"")
            }
        }
    }

    @Test("a log whose sealed lines have no erased event after them (it was lost: cut from the log, or its last line without its newline) is refused at start-up, as verify refuses it, not served with an untitled announcement")
    func sealedWithoutErasureRefused() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSecrets(in: folder)
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.erase(id: 2, by: "root", reason: "personal data")
        await store.close()
        let erased = try lines(of: path)
        #expect(erased.last?.contains(#""type":"erased""#) == true)
        // The erased event without its newline (read as a torn last line), or without the line.
        for (name, cut) in [("its newline lost", true), ("the line lost", false)] {
            try write(Array(erased.dropLast()) + (cut ? [erased[erased.count - 1]] : []), to: path, trailingNewline: !cut)
            try? FileManager.default.removeItem(atPath: path + ".head")
            try? FileManager.default.removeItem(atPath: path + ".snapshot")
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let refused = await #expect(throws: StoreError.self, "\(name)") { _ = try await EventStore.open(path: path, logger: quiet) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(name): nothing set aside or changed")
            guard case .log(let problem)? = refused else { continue }
            #expect(problem.kind == .invalidLine && problem.line == 2, "\(name): \(problem)")
            #expect(problem.message.hasPrefix("the data of announcement 2 was erased here, but no erased event for it follows"), "\(name): \(problem.message)")
        }
    }

    @Test("after an erasure, verify finds a change to any other line, and to the erased skeleton")
    func tamperIsFound() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSecrets(in: folder)
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.erase(id: 2, by: "root", reason: "personal data")
        await store.close()
        let original = try lines(of: path)
        let changes: [(line: Int, from: String, to: String)] = [
            (0, "Soup", "Stew"),                 // another line's text
            (1, #""by":"alice""#, #""by":"carol""#),  // the erased line's writer
            (2, "2026-", "2025-"),              // the erased line's time
            (1, #""sealed":"0"#, #""sealed":"1"#), (1, #""sealed":"a"#, #""sealed":"b"#),  // its digest (one of the two applies)
        ]
        var tried = 0
        for change in changes {
            var changed = original
            guard changed[change.line].contains(change.from) else { continue }
            changed[change.line] = changed[change.line].replacingOccurrences(of: change.from, with: change.to)
            try write(changed, to: path)
            tried += 1
            let report = try LogReader(path: path).verify()
            #expect(!report.isSound, "changing \(change.from) on line \(change.line + 1) went unnoticed")
            #expect(report.problems.contains { $0.line == change.line + 2 && $0.description.contains("prev") }, "\(report.problems)")
        }
        #expect(tried >= 3)
        // Padding is covered too: a space added to a line with data, one taken from a sealed line.
        let padded: [(line: Int, change: (String) -> String)] = [
            (0, { String($0.dropLast()) + " }" }),
            (1, { String($0.dropLast(2)) + "}" }),
        ]
        for (line, change) in padded {
            var changed = original
            changed[line] = change(changed[line])
            try write(changed, to: path)
            let report = try LogReader(path: path).verify()
            #expect(report.problems.contains { $0.line == line + 2 }, "padding changed on line \(line + 1) went unnoticed: \(report.problems)")
        }
    }

    @Test("after an erasure, a repeat of a keyed write of the announcement is refused, never answered with its texts; a store without snapshots deletes one left from before")
    func repeatsAndOldSnapshots() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        _ = try await first.create(AnnouncementDraft(title: Self.secrets[0]), by: "alice", key: "create-1")
        await first.close()
        #expect(FileManager.default.fileExists(atPath: path + ".snapshot"))
        let store = try await EventStore.open(path: path, logger: quiet)
        let created = try await store.create(AnnouncementDraft(title: Self.secrets[2]), by: "alice", key: "create-2")
        _ = try await store.erase(id: 1, by: "root", reason: "personal data")
        _ = try await store.erase(id: created.id, by: "root", reason: "personal data")
        #expect(!FileManager.default.fileExists(atPath: path + ".snapshot"), "snapshots are off here, but the one left from before held the texts")
        for (key, title) in [("create-1", Self.secrets[0]), ("create-2", Self.secrets[2]), ("create-2", "a wrong guess")] {
            await #expect(throws: StoreError.self, "\(key)") { try await store.create(AnnouncementDraft(title: title), by: "alice", key: key) }
        }
        // Guessed right or wrong, the same refusal: nothing confirms a guess.
        var refusals: [String] = []
        for title in [Self.secrets[2], "a wrong guess"] {
            do {
                _ = try await store.create(AnnouncementDraft(title: title), by: "alice", key: "create-2")
            } catch {
                refusals.append("\(error)")
            }
        }
        #expect(refusals.count == 2 && refusals[0] == refusals[1], "\(refusals)")
        #expect(store.lastSeq == 4, "nothing appended")
        await store.close()
    }

    @Test("an erasure interrupted after its event, or halfway through its overwrite, is finished by the next open")
    func interruptedErasure() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSecrets(in: folder)
        let first = try await EventStore.open(path: path, logger: quiet)  // sets the torn line aside
        await first.close()
        let before = try lines(of: path)
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.erase(id: 2, by: "root", reason: "personal data")
        await store.close()
        let erased = try lines(of: path)
        let readable = try LogReader(path: path).replay().model

        // Crash after the erased event, before the overwrite: the lines still hold their data.
        var unsealed = erased
        unsealed[1] = before[1]
        unsealed[2] = before[2]
        try write(unsealed, to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains(Self.secrets[0]))
        let reopened = try await EventStore.open(path: path, logger: quiet)
        await reopened.close()
        #expect(try lines(of: path) == erased, "the open sealed them")

        // Crash halfway through the overwrite: line 2 half sealed; the journal holds the new bytes.
        var torn = erased
        torn[1] = String(erased[1].prefix(40)) + String(before[1].dropFirst(40))
        try write(torn, to: path)
        let journal = FileLog.journalPath(forLog: path)
        let replacements = [(Int64(erased[0].utf8.count + 1), Array(erased[1].utf8))]
        var body: [UInt8] = []
        for (position, bytes) in replacements {
            withUnsafeBytes(of: position.littleEndian) { body += $0 }
            withUnsafeBytes(of: Int64(bytes.count).littleEndian) { body += $0 }
            body += bytes
        }
        try Data(Array("ANNOERAS".utf8) + Array(SHA256Digest.of(body)) + body).write(to: URL(fileURLWithPath: journal))
        let recovered = try await EventStore.open(path: path, logger: quiet)
        #expect(Array(recovered.snapshot.announcements) == Array(readable.announcements))
        await recovered.close()
        #expect(try lines(of: path) == erased, "the journal was applied")
        #expect(!FileManager.default.fileExists(atPath: journal), "and removed")
        #expect(try LogReader(path: path).verify().isSound)

        // The log opened through a link: the journal an erasure through either name left (one by
        // the file's name, as this version writes it; one by the link's, as versions before
        // 1.34.0 did) is found and applied.
        let link = folder.file("current.jsonl")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        for left in [journal, link + ".erasing"] {
            try write(torn, to: path)
            try Data(Array("ANNOERAS".utf8) + Array(SHA256Digest.of(body)) + body).write(to: URL(fileURLWithPath: left))
            let throughLink = try await EventStore.open(path: link, logger: quiet)
            await throughLink.close()
            #expect(try lines(of: path) == erased, "the journal \(left) was applied")
            #expect(!FileManager.default.fileExists(atPath: left), "and removed")
        }
    }

    @Test("an erasure whose overwrite could not start leaves its lines holding the texts: history and the feed serve them sealed meanwhile, byte for byte what the overwrite then writes")
    func unsealedLinesServedSealed() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Canteen menu", body: "<p>Soup</p>"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: Self.secrets[0], body: "<p>\(Self.secrets[1])</p>"), by: "alice")
        _ = try await store.update(id: 2, AnnouncementPatch(title: Self.secrets[2]), by: "bob")
        // A folder where the journal goes: the erased event is appended, the overwrite cannot start.
        let journal = FileLog.journalPath(forLog: path)
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: false)
        do throws(StoreError) {
            _ = try await store.erase(id: 2, by: "root", reason: "personal data")
            Issue.record("the overwrite could not start, and the erasure said nothing")
        } catch {
            // Not a failed append: the log takes writes (an answer must not say it cannot be written).
            guard case .log(let problem) = error else { Issue.record("\(error)"); return }
            #expect(problem.kind == .sealsLeft && problem.message.hasPrefix("announcement 2 is erased (event 4), but its lines could not be overwritten yet: "), "\(problem)")
        }
        #expect(store.snapshot.erased == [2: 4])
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains(Self.secrets[0]), "the lines still hold the texts")
        #expect(store.unsealedErasures == 1, "counted, for the metrics")
        _ = try await store.create(AnnouncementDraft(title: "Still writable"), by: "alice")

        let history = try #require(try await store.historyLines(id: 2)).map { String(decoding: $0, as: UTF8.self) }
        let feed = try await store.eventLines(after: 0, limit: 4).map { String(decoding: $0, as: UTF8.self) }
        for text in history + feed {
            #expect(!Self.secrets.contains { text.contains($0) }, "served: \(text)")
        }
        #expect(history.count == 3)
        #expect(history.prefix(2).allSatisfy { $0.contains(#""sealed":""#) })
        #expect(feed[0].contains("Canteen menu"), "other announcements' lines are as stored")
        // The history with its events (the web client's audit page) is read the same way.
        let events = try #require(try await store.history(id: 2))
        #expect(events.map { String(decoding: $0.line, as: UTF8.self) } == history)
        #expect(events.map(\.event.type) == [.created, .edited, .erased])
        for (_, event) in events.prefix(2) {
            guard case .sealed = event.change else { Issue.record("served with its texts: \(event.change)"); continue }
        }

        // The overwrite, once it can run, writes exactly what was served; erasing again, which
        // ran it, says that it finished the erasure made before.
        try FileManager.default.removeItem(atPath: journal)
        let finished = try await store.erase(id: 2, by: "root", reason: "personal data")
        #expect(finished == EventStore.Erasure(seq: 4, sealedLines: [2, 3], finishedEarlier: true))
        #expect(!(try String(contentsOfFile: path, encoding: .utf8).contains(Self.secrets[0])))
        #expect(store.unsealedErasures == 0)
        #expect(try #require(try await store.historyLines(id: 2)).map { String(decoding: $0, as: UTF8.self) } == history)
        #expect(try await store.eventLines(after: 0, limit: 4).map { String(decoding: $0, as: UTF8.self) } == feed)
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("a journal left beside a log it was not written for (the log restored from elsewhere) writes nothing into it: the open fails naming it, the log and the journal stay", arguments: [false, true])
    func journalOfAnotherLog(sameLength: Bool) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        // The log the journal was written for: announcement 2 erased, its line sealed.
        var store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: "Two"), by: "alice")
        _ = try await store.erase(id: 2, by: "root", reason: "asked")
        await store.close()
        let erased = try lines(of: path)
        // Another log in its place (restored from elsewhere): its line 2 another event, of the same
        // length or not.
        for file in [path, path + ".snapshot", HeadRecord.path(forLog: path)] { try? FileManager.default.removeItem(atPath: file) }
        store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: sameLength ? "Owt" : "Two, restored"), by: sameLength ? "alicf" : "bob")
        await store.close()
        let restored = try lines(of: path)
        #expect((restored[1].utf8.count == erased[1].utf8.count) == sameLength)
        var body: [UInt8] = []
        withUnsafeBytes(of: Int64(restored[0].utf8.count + 1).littleEndian) { body += $0 }
        withUnsafeBytes(of: Int64(erased[1].utf8.count).littleEndian) { body += $0 }
        body += Array(erased[1].utf8)
        let journal = FileLog.journalPath(forLog: path)
        try Data(Array("ANNOERAS".utf8) + Array(SHA256Digest.of(body)) + body).write(to: URL(fileURLWithPath: journal))

        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
        #expect("\(String(describing: failure))".contains("A journal left beside it, <log>.erasing, belongs to the log it was written for"))
        #expect(try lines(of: path) == restored, "nothing written into the log")
        #expect(FileManager.default.fileExists(atPath: journal), "the journal stays, for whoever looks")
    }

    @Test("a journal whose numbers cannot be (a length past its own end, a line past the largest offset; crafted, its checksum whole) is no crash: one is dropped as torn, the other refused naming it, the log as it was")
    func journalWithImpossibleNumbers() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        await store.close()
        let before = try lines(of: path)
        let journal = FileLog.journalPath(forLog: path)
        for (position, count, refused) in [(Int64(0), Int64.max, false), (Int64.max - 4, Int64(10), true)] {
            var body: [UInt8] = []
            withUnsafeBytes(of: position.littleEndian) { body += $0 }
            withUnsafeBytes(of: count.littleEndian) { body += $0 }
            body += Array(#"{"seq":1,"sealed":"x"}"#.utf8.prefix(10))
            try Data(Array("ANNOERAS".utf8) + Array(SHA256Digest.of(body)) + body).write(to: URL(fileURLWithPath: journal))
            if refused {
                let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, logger: quiet) }
                #expect("\(String(describing: failure))".contains("which are not a line of the log"), "\(String(describing: failure))")
                #expect(FileManager.default.fileExists(atPath: journal), "the journal stays, for whoever looks")
            } else {
                let opened = try await EventStore.open(path: path, logger: quiet)
                #expect(opened.snapshot.seq == 1)
                await opened.close()
                #expect(!FileManager.default.fileExists(atPath: journal), "dropped as a torn journal")
            }
            #expect(try lines(of: path) == before)
        }
    }

    @Test("an erasure that failed after its overwrite (a failed sync) is finished by erasing again: its journal applied and removed, no page of the feed read before the overwrite kept")
    func retriedErasure() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        // How many syncs go through before one fails (nil: none fails).
        let syncsBeforeFailure = Mutex<Int?>(nil)
        let operations = FileOperations.withFailingSync {
            syncsBeforeFailure.withLock { left -> Bool in
                guard let count = left else { return false }
                left = count == 0 ? nil : count - 1
                return count == 0
            }
        }
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        _ = try await store.create(AnnouncementDraft(title: "Canteen menu", body: "<p>Soup</p>"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: Self.secrets[0], body: "<p>\(Self.secrets[1])</p>"), by: "alice")
        let unsealed = try await store.eventLines(after: 0, limit: 10)
        // The store's own look at the lines would find them sealed (the failed sync's bytes are in
        // the file) and drop the page planted below, half a second after the erased event: under
        // load, before the page is read. The erasure itself must drop it.
        store.looksForSeals.store(false, ordering: .relaxed)
        // The erased event's sync goes through; the overwrite's fails, once its bytes are written.
        syncsBeforeFailure.withLock { $0 = 1 }
        await #expect(throws: StoreError.self) { try await store.erase(id: 2, by: "root", reason: "personal data") }
        #expect(store.snapshot.erased == [2: 3])
        #expect(FileManager.default.fileExists(atPath: FileLog.journalPath(forLog: path)), "the overwrite is not known to be durable: its journal stays")
        // A follower's page read while the first attempt overwrote the lines, before they changed.
        let erasedLine = try await store.eventLines(after: 2, limit: 1)
        let page = unsealed + erasedLine
        let lastSeq = store.lastSeq
        try store.feedPages.withLock { pages throws(StoreError) in
            _ = try pages.lines(after: 0, lastSeq: lastSeq) { _, _ in page }
        }
        let holdsSecret = { (lines: [ArraySlice<UInt8>]) in
            lines.contains { line in Self.secrets.contains { String(decoding: line, as: UTF8.self).contains($0) } }
        }
        let stale = try await store.followerLines(after: 0).lines
        #expect(holdsSecret(stale), "the page is served until the erasure is finished")
        let erasures = store.erasureCount

        await #expect(throws: StoreError.erased(id: 2, seq: 3)) { try await store.erase(id: 2, by: "root", reason: "personal data") }
        let lines = try await store.followerLines(after: 0).lines
        #expect(lines.count == 3)
        #expect(!holdsSecret(lines), "no page read before the overwrite is kept")
        #expect(store.erasureCount > erasures, "the event streams' caches are dropped too")
        #expect(!FileManager.default.fileExists(atPath: FileLog.journalPath(forLog: path)), "the journal was applied again, synced and removed")
        await store.close()
        for (name, bytes) in try files(in: folder.path) {
            for secret in Self.secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) still holds \"\(secret)\"")
            }
        }
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("an erasure that cannot delete the snapshot beside the log seals the lines and says so, naming it; erasing again, once it can, deletes it")
    func snapshotLeftBehind() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, seed: [], logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: Self.secrets[0], body: "<p>\(Self.secrets[1])</p>"), by: "alice")
        // What unlink(2) cannot remove where the snapshot goes: a folder, holding a file.
        let snapshot = SnapshotFile.path(forLog: path)
        try FileManager.default.createDirectory(atPath: snapshot, withIntermediateDirectories: false)
        try Data("a copy".utf8).write(to: URL(fileURLWithPath: snapshot + "/copy"))
        let failure = await #expect(throws: StoreError.self) { try await store.erase(id: 1, by: "root", reason: "personal data") }
        guard case .log(let problem)? = failure else {
            Issue.record("not the log's error: \(String(describing: failure))")
            return
        }
        #expect(problem.kind == .copiesLeft)
        #expect(problem.message.hasPrefix("announcement 1 is erased (event 2) and its lines overwritten, but the snapshot beside the log cannot be deleted (\(snapshot): "), "\(problem.message)")
        #expect(problem.message.hasSuffix("delete it by hand, or fix its folder and erase again"), "\(problem.message)")
        let log = try Data(contentsOf: URL(fileURLWithPath: path))
        for secret in Self.secrets { #expect(log.range(of: Data(secret.utf8)) == nil, "the lines are sealed all the same") }
        // Now a snapshot that can be deleted.
        try FileManager.default.removeItem(atPath: snapshot)
        try Data("a snapshot that holds the texts".utf8).write(to: URL(fileURLWithPath: snapshot))
        await #expect(throws: StoreError.erased(id: 1, seq: 2)) { try await store.erase(id: 1, by: "root", reason: "personal data") }
        #expect(!FileManager.default.fileExists(atPath: snapshot), "erasing again deleted it")
        await store.close()
    }

    @Test("a log in the first format opens and serves; erasing one of its announcements asks for upgrade, which verifies, keeps the state and makes it erasable")
    func oldFormat() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        let old = try lines(of: path)
        #expect(!old.contains { $0.contains(#""v":"#) })
        let store = try await EventStore.open(path: path, logger: quiet)
        let state = Array(store.snapshot.announcements)
        await #expect(throws: StoreError.needsUpgrade(id: 1, lines: [1, 3, 4])) { try await store.erase(id: 1, by: "root", reason: "old") }
        // New events in an old log are in the new format, and the chain runs through both.
        _ = try await store.create(AnnouncementDraft(title: "New"), by: "alice")
        await store.close()
        #expect(try lines(of: path).last?.contains(#""v":3"#) == true)
        #expect(try LogReader(path: path).verify().isSound)
        #expect(try lines(of: path).dropLast() == old[...], "old lines are read as they are")

        let outcome = try LogUpgrade.upgrade(path: path, rules: ValidationRules())
        #expect(outcome.rewritten == 8 && outcome.events == 8)
        #expect(outcome.oldHead != outcome.newHead)
        #expect(try lines(of: path).allSatisfy { $0.contains(#""v":3"#) })
        let upgraded = try await EventStore.open(path: path, logger: quiet)
        #expect(Array(upgraded.snapshot.announcements).dropLast() == state[...])
        _ = try await upgraded.erase(id: 1, by: "root", reason: "old")
        await upgraded.close()
        #expect(try LogReader(path: path).verify().isSound)
        let unchanged = FileManager.default.contents(atPath: path)
        #expect(try LogUpgrade.upgrade(path: path, rules: ValidationRules()).rewritten == 0, "a second upgrade has nothing to do")
        #expect(FileManager.default.contents(atPath: path) == unchanged && !FileManager.default.fileExists(atPath: path + ".upgrading"), "and leaves nothing beside the log")
    }

    @Test("a line's link: the SHA-256 of its bytes in the first format; from the second on, of its sealed form, which erasing writes in its place at the same length")
    func links() throws {
        let old = #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00.000Z","by":"seed","data":{"title":"T"}}"#
        #expect(LineHash(link: Array(old.utf8)) == LineHash(of: Array(old.utf8)))
        let salt = String(repeating: "ab", count: 32)
        let datas = [#"{"title":"T"}"#, #"{"title":"A longer title","body":"<p>With a body \"quoted\"</p>"}"#]
        // Every format that seals links the same way; its `v` is part of the sealed form.
        for (format, data) in (2...Int(Event.currentFormat)).flatMap({ format in datas.map { (format, $0) } }) {
            let line = #"{"seq":2,"type":"created","id":1,"at":"2026-11-21T09:30:00.000Z","by":"seed","data":\#(data),"salt":"\#(salt)","v":\#(format),"prev":"\#(String(repeating: "0", count: 64))"}"#
            let sealed = try #require(Array(line.utf8).withUnsafeBytes { SealableLine.sealed($0) })
            #expect(sealed.count == line.utf8.count)
            #expect(LineHash(link: sealed) == LineHash(link: Array(line.utf8)))
            #expect(LineHash(link: Array(line.utf8)) != LineHash(of: Array(line.utf8)))
            let event = try EventParser.parse(sealed)
            guard case .sealed(.created, _) = event.change else { Issue.record("\(event.change)"); continue }
            #expect(Int(event.format) == format)
            #expect(sealed.withUnsafeBytes { SealableLine.sealed($0) } == nil, "a sealed line has nothing left to erase")
            // The digest depends on the salt: another salt, another link.
            let resalted = line.replacingOccurrences(of: salt, with: String(repeating: "cd", count: 32))
            #expect(LineHash(link: Array(resalted.utf8)) != LineHash(link: Array(line.utf8)))
        }
    }
}

/// SHA-256 for the test's own journal.
private enum SHA256Digest {
    static func of(_ bytes: [UInt8]) -> [UInt8] {
        LineHash(of: bytes).bytes
    }
}
