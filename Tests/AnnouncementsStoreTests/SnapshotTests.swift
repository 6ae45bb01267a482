import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// Snapshots: start-up from a snapshot and the lines after it gives exactly the state a full
/// replay gives, and every snapshot that cannot be trusted is ignored with a warning naming why.
/// Serialized: the tests replay and load whole logs synchronously, and run side by side they would
/// keep Swift concurrency's threads from the other suites' servers.
@Suite(.serialized) struct SnapshotTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Snapshots at close only, so that each test decides where its snapshot is.
    let atClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)

    /// A log with keys, edits and deletes, and a snapshot of it written by a store's close; then
    /// more lines after the snapshot (edits and deletes of announcements it holds, keyed writes,
    /// new ids), written with snapshots off. `large`: over 4 MiB of bodies, so that the snapshot
    /// spans more than one checksum block (and items span blocks).
    func logWithSnapshotAndTail(in folder: TemporaryFolder, large: Bool = false) async throws -> String {
        let path = folder.file("log.jsonl")
        var events: [Event] = []
        let body = String(repeating: "<p>caf\u{E9} \"quoted\" text</p>", count: large ? 80 : 2)
        for id in 1...(large ? 2400 : 120) {
            var event = created(events.count + 1, id: id, "Title \(id % 97) \(id)", body: id % 5 == 0 ? nil : "\(id) \(body)")
            if id % 7 == 0 { event.key = "key-\(id)" }
            events.append(event)
            if id % 3 == 0 { events.append(edited(events.count + 1, id: id - 1, title: "Renamed \(id)")) }
            if id % 11 == 0 { events.append(deleted(events.count + 1, id: id - 2)) }
        }
        try writeLog(events, to: path)
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        await first.close()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == events.count)

        let second = try await EventStore.open(path: path, logger: quiet)
        _ = try await second.update(id: 1, AnnouncementPatch(title: "Zebra first", body: .set("<p>new</p>")), by: "alice", key: "tail-edit")
        try await second.delete(id: 4, by: "bob")
        _ = try await second.create(AnnouncementDraft(title: "aardvark", body: nil), by: "alice", key: "tail-create")
        _ = try await second.update(id: 2, AnnouncementPatch(body: .clear), by: "carol")
        _ = try await second.create(AnnouncementDraft(title: "Title 1 1"), by: "dave")
        await second.close()
        return path
    }

    /// Everything a server answers from, as one comparable value: each announcement's exact bytes,
    /// both list orders, each id's history lines, the feed, the head, and the idempotency keys.
    func answers(_ store: EventStore) async throws -> [String] {
        let model = store.snapshot
        var answers = ["seq \(model.seq) maxId \(model.maxId) lastAt \(String(describing: model.lastAt)) head \(String(describing: store.head)) lastSeq \(store.lastSeq)"]
        for announcement in model.announcements {
            answers.append("\(announcement.id) r\(announcement.revision) \(Array(announcement.title.utf8)) \(announcement.bodyText.map { Array($0.escaped) } ?? [])")
        }
        for order in PageQuery.Order.allCases {
            answers.append("title \(order): \(model.announcements(PageQuery(offset: 0, limit: 100_000, sort: .title, order: order)).items.map(\.id))")
        }
        for id in 1...(model.maxId + 1) {
            answers.append("history \(id): \(try await store.historyLines(id: id)?.map { Array($0) } ?? [])")
        }
        var after = 0
        while after < store.lastSeq {
            let page = try await store.eventLines(after: after, limit: 1000)
            answers.append("feed after \(after): \(page.map { Array($0) })")
            after += page.count
        }
        answers.append("keys \(store.committer.keys.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        return answers
    }

    /// The answers of a store opened on `path` with snapshots off: from the whole log.
    func fullReplayAnswers(_ path: String) async throws -> [String] {
        let store = try await EventStore.open(path: path, logger: quiet)
        let result = try await answers(store)
        await store.close()
        return result
    }

    @Test("a store opened from a snapshot and the lines after it answers exactly as one that replayed the whole log")
    func snapshotPlusTailEqualsFullReplay() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSnapshotAndTail(in: folder, large: true)
        #expect(try SnapshotFile.Header(snapshotHeader(path)).payloadLength > Int64(SnapshotFile.blockSize))
        let expected = try await fullReplayAnswers(path)

        let logs = LogCapture()
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: logs.logger)
        let loaded = logs.entries(containing: "loaded the snapshot")
        #expect(loaded.count == 1)
        #expect(loaded.first?.metadata["log.lines_replayed"] == "5")
        #expect(logs.warnings.isEmpty)
        #expect(try await answers(store) == expected)

        // A repeat of a keyed write from before the snapshot is recognised: nothing is appended.
        let seq = store.snapshot.seq
        let body = "7 " + String(repeating: "<p>caf\u{E9} \"quoted\" text</p>", count: 80)
        let repeated = try await store.create(AnnouncementDraft(title: "Title 7 7", body: body), by: "alice", key: "key-7")
        #expect(repeated.id == 7)
        #expect(store.snapshot.seq == seq)
        // And a new write takes the next id and chains to the last line.
        let next = try await store.create(AnnouncementDraft(title: "After"), by: "alice")
        #expect(next.id == store.snapshot.maxId)
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)
    }

    @Test("who created each announcement comes back from a snapshot, byte for byte: an author's own stay its own")
    func creatorsFromSnapshot() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        // "é" as one scalar and as "e" and a combining accent: equal Strings, different writers.
        for writer in ["alice", "arthur", "ren\u{E9}", "ren\u{65}\u{301}"] {
            _ = try await first.create(AnnouncementDraft(title: "By \(writer)"), by: writer)
        }
        await first.close()
        let logs = LogCapture()
        let second = try await EventStore.open(path: path, snapshots: atClose, logger: logs.logger)
        #expect(!logs.entries(containing: "loaded the snapshot").isEmpty, "the state came from the snapshot")
        #expect(second.snapshot.announcements.map { Array($0.createdBy.utf8) } == ["alice", "arthur", "ren\u{E9}", "ren\u{65}\u{301}"].map { Array($0.utf8) })
        _ = try await second.update(id: 2, AnnouncementPatch(title: "Mine"), by: "arthur", scope: .own)
        await #expect(throws: StoreError.notOwn(id: 1, createdBy: "alice")) {
            try await second.update(id: 1, AnnouncementPatch(title: "Not mine"), by: "arthur", scope: .own)
        }
        _ = try await second.update(id: 4, AnnouncementPatch(title: "Mine too"), by: "ren\u{65}\u{301}", scope: .own)
        await #expect(throws: StoreError.notOwn(id: 3, createdBy: "ren\u{E9}")) {
            try await second.delete(id: 3, by: "ren\u{65}\u{301}", scope: .own)
        }
        await second.close()
    }

    /// Ways a snapshot can stop matching its log, or stop being readable.
    enum Damage: String, CaseIterable, Sendable {
        case missing, logCutBack, taggedLineRewritten, tailDoesNotChain, payloadByteFlipped, fileTruncated, headerByteFlipped, payloadLengthOverflows, foreignVersion, newerLineFormat

        var reason: String {
            switch self {
            case .missing: "missing"
            case .logCutBack, .taggedLineRewritten, .tailDoesNotChain: "stale"
            case .payloadByteFlipped, .fileTruncated, .headerByteFlipped, .payloadLengthOverflows: "corrupt"
            case .foreignVersion, .newerLineFormat: "foreign version"
            }
        }

        /// Whether start-up refuses the log: it no longer holds what the snapshot covers, or its
        /// chain breaks where the snapshot's line meets the next one.
        var isRefused: Bool { reason == "stale" }

        /// The line a refusal names, for a snapshot tagged with line `seq`.
        func refusedLine(tag seq: Int) -> Int? {
            switch self {
            case .taggedLineRewritten: seq
            case .tailDoesNotChain: seq + 1
            default: nil
            }
        }

        /// Does the damage to the log at `path` and its snapshot.
        func apply(toLogAt path: String) throws {
            let snapshotPath = SnapshotFile.path(forLog: path)
            let tag = try SnapshotFile.Header(snapshotHeader(path)).tag
            var log = try Data(contentsOf: URL(fileURLWithPath: path))
            var snapshot = try Data(contentsOf: URL(fileURLWithPath: snapshotPath))
            switch self {
            case .missing:
                try FileManager.default.removeItem(atPath: snapshotPath)
            case .logCutBack:
                // Back to the first ten lines: the snapshot covers lines the log no longer has.
                let lines = log.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                log = Data(lines.prefix(10).joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")])
            case .taggedLineRewritten:
                // Same length, one character changed, in the title of the tagged line.
                let line = log[Int(tag.lineStart)..<Int(tag.end)]
                let title = try #require(line.firstRange(of: Data(#""title":""#.utf8)))
                log[title.upperBound] = log[title.upperBound] == UInt8(ascii: "X") ? UInt8(ascii: "Y") : UInt8(ascii: "X")
            case .tailDoesNotChain:
                // The line after the tagged one claims another line before it.
                let next = log[Int(tag.end)...]
                let prev = try #require(next.firstRange(of: Data(#""prev":""#.utf8)))
                log[prev.upperBound] = log[prev.upperBound] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            case .payloadByteFlipped:
                snapshot[snapshot.count / 2] ^= 0x20
            case .fileTruncated:
                snapshot = snapshot.prefix(snapshot.count / 2)
            case .headerByteFlipped:
                snapshot[16] ^= 0x01
            case .payloadLengthOverflows:
                // A payload length the header's size cannot be added to, the header's checksum
                // made again (a crafted file, not a flipped bit).
                snapshot = SnapshotTests.withHeader(snapshot) { $0.replaceSubrange(72..<80, with: withUnsafeBytes(of: Int64.max.littleEndian, Array.init)) }
            case .foreignVersion:
                snapshot[8] &+= 1
            case .newerLineFormat:
                snapshot = SnapshotTests.fromNewerVersion(snapshot)
            }
            try log.write(to: URL(fileURLWithPath: path))
            if self != .missing { try snapshot.write(to: URL(fileURLWithPath: snapshotPath)) }
        }
    }

    @Test("a snapshot that is missing, corrupt or of another version is ignored with a warning naming why, and the whole log is replayed", arguments: Damage.allCases.filter { !$0.isRefused })
    func fallsBack(damage: Damage) async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSnapshotAndTail(in: folder)
        try damage.apply(toLogAt: path)
        let expected = try await fullReplayAnswers(path)

        let logs = LogCapture()
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: logs.logger)
        let answered = try await answers(store)
        await store.close()
        #expect(answered == expected)
        let warnings = logs.entries(containing: "not using the snapshot")
        #expect(warnings.count == 1)
        #expect(warnings.first?.level == .warning)
        #expect(warnings.first?.metadata["snapshot.reason"] == damage.reason)
        #expect(warnings.first?.message.contains(damage.reason + ":") == true, "the message names the reason: \(warnings.first?.message ?? "none")")
        #expect(logs.entries(containing: "loaded the snapshot").isEmpty)
        // The close wrote a snapshot that matches the log again.
        let reopened = LogCapture()
        let again = try await EventStore.open(path: path, snapshots: atClose, logger: reopened.logger)
        #expect(reopened.entries(containing: "loaded the snapshot").count == 1)
        #expect(try await answers(again) == expected)
        await again.close()
    }

    @Test("a log that no longer holds what its snapshot covers (cut back, the tagged line changed, the next one not chained to it) is refused, naming the line, with snapshots on or off; nothing is written", arguments: Damage.allCases.filter(\.isRefused))
    func refusesStaleLog(damage: Damage) async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSnapshotAndTail(in: folder)
        let tag = try SnapshotFile.Header(snapshotHeader(path)).tag
        try damage.apply(toLogAt: path)
        let before = try folderContents(folder)
        for policy in [atClose, .off] {
            let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, snapshots: policy, logger: quiet) }
            guard case .log(let error)? = failure else { continue }
            #expect(error.kind == .damaged)
            #expect(error.line == damage.refusedLine(tag: tag.seq), "\(error)")
            if damage == .tailDoesNotChain {
                #expect(error.message.contains("the hash chain is broken") && error.message.contains("--accept-broken-chain"), "\(error)")
            } else {
                #expect(error.message.contains("mv \(SnapshotFile.path(forLog: path)) "), "how to go on: \(error)")
            }
            #expect(try folderContents(folder) == before, "nothing written beside the log, nothing of it changed")
        }
    }

    @Test("a log emptied beside its snapshot is refused, not seeded; moving the snapshot aside (on purpose) lets it start and be seeded")
    func emptiedLogIsNotSeeded() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSnapshotAndTail(in: folder)
        try FileManager.default.removeItem(atPath: HeadRecord.path(forLog: path))  // the snapshot alone says what the log held
        try Data().write(to: URL(fileURLWithPath: path))
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: SnapshotFile.path(forLog: path)))
        let failure = await #expect(throws: StoreError.self) {
            try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "Seed")], snapshots: atClose, logger: quiet)
        }
        #expect("\(String(describing: failure))".contains("the log is only 0 bytes"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "not seeded")
        #expect(try Data(contentsOf: URL(fileURLWithPath: SnapshotFile.path(forLog: path))) == snapshot, "the snapshot is the copy of what the log held")

        try FileManager.default.moveItem(atPath: SnapshotFile.path(forLog: path), toPath: SnapshotFile.path(forLog: path) + ".set-aside")
        let store = try await EventStore.open(path: path, seed: [AnnouncementDraft(title: "Seed")], snapshots: atClose, logger: quiet)
        #expect(store.snapshot.seq == 1)
        await store.close()
    }

    /// Every file in `folder` and its bytes.
    func folderContents(_ folder: TemporaryFolder) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            contents[name] = try Data(contentsOf: URL(fileURLWithPath: folder.file(name)))
        }
        return contents
    }

    /// `snapshot` as a version that reads a line format newer than this one's would write it
    /// (the header's line format one above `Event.currentFormat`, its checksum made again).
    static func fromNewerVersion(_ snapshot: Data) -> Data {
        withHeader(snapshot) { $0.replaceSubrange(88..<96, with: [Event.currentFormat + 1, 0, 0, 0, 0, 0, 0, 0]) }
    }

    /// `snapshot` with its header changed by `change`, and the header's checksum made again.
    static func withHeader(_ snapshot: Data, _ change: (inout [UInt8]) -> Void) -> Data {
        var header = Array(snapshot.prefix(SnapshotFile.headerSize))
        change(&header)
        header.replaceSubrange(96..<104, with: withUnsafeBytes(of: SnapshotChecksum.xxh64(Array(header[0..<96])).littleEndian, Array.init))
        return Data(header) + snapshot.dropFirst(SnapshotFile.headerSize)
    }

    @Test("a log a newer version wrote, with that version's snapshot covering its lines, is refused as a full replay refuses it (a downgrade), not started from the snapshot")
    func newerVersionsSnapshotIsNotTrusted() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "From the newer version"), by: "alice")
        _ = try await store.create(AnnouncementDraft(title: "Its last line"), by: "alice")
        await store.close()
        // What the newer version wrote: a line of its format before the one the snapshot is tagged
        // with (that one unchanged: only the header's line format can keep the snapshot unused).
        var log = try Data(contentsOf: URL(fileURLWithPath: path))
        let format = Data(#","v":\#(Event.currentFormat)"#.utf8)
        let newer = Data(#","v":\#(Event.currentFormat + 1)"#.utf8)
        let place = try #require(log.range(of: format))
        log.replaceSubrange(place, with: newer)
        try log.write(to: URL(fileURLWithPath: path))
        let snapshotPath = SnapshotFile.path(forLog: path)
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: snapshotPath))
        try Self.fromNewerVersion(snapshot).write(to: URL(fileURLWithPath: snapshotPath))

        let logs = LogCapture()
        let failure = await #expect(throws: StoreError.self) { try await EventStore.open(path: path, snapshots: atClose, logger: logs.logger) }
        #expect("\(String(describing: failure))".contains("upgrade"), "\(String(describing: failure))")
        #expect(logs.entries(containing: "loaded the snapshot").isEmpty)
    }

    @Test("a new, empty log has no snapshot and no warning")
    func emptyLogNoWarning() async throws {
        let folder = TemporaryFolder()
        let logs = LogCapture()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), snapshots: atClose, logger: logs.logger)
        await store.close()
        #expect(logs.warnings.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: folder.file("log.jsonl"))), "nothing to snapshot")
    }

    @Test("the size the free-space check asks for is at least what the snapshot takes, and not many times more")
    func estimatedSize() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        for index in 1...200 {
            let created = try await store.create(AnnouncementDraft(title: "Announcement \(index)", body: String(repeating: "<p>x</p>", count: index)), by: "alice", key: "key-\(index)")
            if index % 3 == 0 { _ = try await store.update(id: created.id, AnnouncementPatch(title: "Edited \(index)"), by: "bob") }
            if index % 7 == 0 { _ = try await store.delete(id: created.id, by: "alice") }
        }
        let estimate = store.snapshotContents(of: store.snapshot).estimatedSize
        await store.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: SnapshotFile.path(forLog: path))[.size] as? Int64)
        #expect(estimate >= size, "estimated \(estimate), took \(size)")
        #expect(estimate < 3 * size, "estimated \(estimate), took \(size)")
    }

    @Test("the store writes a snapshot when it closes, and the next start-up replays no line")
    func writtenAtClose() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        for index in 1...3 { _ = try await store.create(AnnouncementDraft(title: "A\(index)"), by: "alice") }
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)), "none before the close")
        await store.close()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == 3)
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.partialPath(forLog: path)))

        let logs = LogCapture()
        let reopened = try await EventStore.open(path: path, snapshots: atClose, logger: logs.logger)
        #expect(logs.entries(containing: "loaded the snapshot").first?.metadata["log.lines_replayed"] == "0")
        #expect(reopened.snapshot.announcements(PageQuery(sort: .title)).items.map(\.title) == ["A1", "A2", "A3"])
        await reopened.close()
    }

    @Test("the store writes a snapshot every N events, while it runs")
    func periodic() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: 5, everySeconds: nil), logger: quiet)
        for index in 1...7 { _ = try await store.create(AnnouncementDraft(title: "A\(index)"), by: "alice") }
        await store.waitForSnapshots()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == 5, "taken as the batch with the fifth event was published")
        for index in 8...10 { _ = try await store.create(AnnouncementDraft(title: "A\(index)"), by: "alice") }
        await store.waitForSnapshots()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == 10)
        await store.close()
    }

    @Test("writers go on while a snapshot is being written", .timeLimit(.minutes(10)))
    func writersDoNotWait() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let gate = DispatchSemaphore(value: 0)
        let writing = DispatchSemaphore(value: 0)
        let store = try await EventStore.open(
            path: path, rules: ValidationRules(), seed: [], snapshots: SnapshotPolicy(isEnabled: true, everyEvents: 2, everySeconds: nil),
            logger: quiet, operations: .system, beforeSnapshotWrite: { writing.signal(); gate.wait() }
        )
        for index in 1...2 { _ = try await store.create(AnnouncementDraft(title: "A\(index)"), by: "alice") }
        // The snapshot of seq 2 is now held in the middle of its write; writes still complete.
        await waitOffPool(writing)
        for index in 3...8 { _ = try await store.create(AnnouncementDraft(title: "A\(index)"), by: "alice") }
        #expect(store.snapshot.seq == 8)
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)))
        gate.signal()
        await store.waitForSnapshots()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == 2, "the state as it was when it was taken")
        // The write at close is held too: let it through.
        gate.signal()
        await store.close()
        #expect(try SnapshotFile.Header(snapshotHeader(path)).tag.seq == 8)
    }

    @Test("replayUsingSnapshot gives the state replay gives, from the snapshot or without one")
    func readerUsesSnapshot() async throws {
        let folder = TemporaryFolder()
        let path = try await logWithSnapshotAndTail(in: folder)
        var full = try LogReader(path: path).replay()
        full.model.buildTitleIndex()
        let (fromSnapshot, use) = try LogReader(path: path).replayUsingSnapshot()
        #expect(use.isUsed)
        #expect(use.tail == 5)
        #expect(Array(fromSnapshot.model.announcements) == Array(full.model.announcements))
        #expect(fromSnapshot.lastHash == full.lastHash)
        try FileManager.default.removeItem(atPath: SnapshotFile.path(forLog: path))
        let (without, missing) = try LogReader(path: path).replayUsingSnapshot()
        #expect(missing.reason == "missing")
        #expect(Array(without.model.announcements) == Array(full.model.announcements))
    }

    /// Inputs and XXH64 digests from the reference implementation (Python's xxhash 3).
    static let checksums: [(bytes: [UInt8], seed: UInt64, digest: UInt64)] = [
        ([], 0, 0xEF46_DB37_51D8_E999),
        (Array("abc".utf8), 0, 0x44BC_2CF5_AD77_0999),
        ((0..<1280).map { UInt8($0 % 256) }, 0, 0xAFC1_84AD_7938_A354),
        ((0..<1280).map { UInt8($0 % 256) }, 12345, 0x1262_D0D8_8801_82C3),
        ((0..<37).map { UInt8($0) }, 0, 0xD93F_A2DF_EE5C_24C9),
    ]

    @Test("the checksum is XXH64")
    func checksum() {
        for (bytes, seed, digest) in Self.checksums {
            #expect(SnapshotChecksum.xxh64(bytes, seed: seed) == digest, "\(bytes.count) bytes, seed \(seed)")
        }
    }

    @Test("the schedule: due after N events or T seconds with events, one write at a time, the last at close, the next write after an erasure")
    func schedule() {
        var schedule = SnapshotSchedule(policy: SnapshotPolicy(isEnabled: true, everyEvents: 10, everySeconds: 60), loadedSeq: 100, now: 0)
        var taken = schedule.takePeriodic(seq: 109, count: 5, now: 1)
        #expect(!taken)
        taken = schedule.takePeriodic(seq: 110, count: 5, now: 2)
        #expect(taken)
        taken = schedule.takePeriodic(seq: 130, count: 5, now: 3)
        #expect(!taken, "one write at a time")
        schedule.finished(seq: 110, written: true)
        taken = schedule.takePeriodic(seq: 115, count: 5, now: 61)
        #expect(!taken)
        taken = schedule.takePeriodic(seq: 115, count: 5, now: 62)
        #expect(taken, "60 seconds after the last")
        schedule.finished(seq: 115, written: false)
        taken = schedule.takePeriodic(seq: 115, count: 5, now: 500)
        #expect(!taken, "no new event: nothing to write")
        taken = schedule.takeFinal(seq: 115)
        #expect(taken, "the failed write is retried at close")
        schedule.finished(seq: 115, written: true)
        taken = schedule.takeFinal(seq: 115)
        #expect(!taken, "already written")
        // An erasure deletes the snapshot: the next is due at the next write, as for a store
        // that opened without one.
        schedule.erased(count: 1)
        taken = schedule.takePeriodic(seq: 116, count: 5, now: 63)
        #expect(taken, "due after the erasure")
        schedule.finished(seq: 116, written: true)
        var off = SnapshotSchedule(policy: .off, loadedSeq: 0, now: 0)
        taken = off.takePeriodic(seq: 1_000_000, count: 5, now: 1e9)
        #expect(!taken)
        taken = off.takeFinal(seq: 1)
        #expect(!taken)
    }

    @Test("a state larger than N events waits for as many events as it held at the last snapshot: a growing state is written at doubling intervals")
    func scheduleGrowsWithTheState() {
        let policy = SnapshotPolicy(isEnabled: true, everyEvents: 10, everySeconds: nil)
        var schedule = SnapshotSchedule(policy: policy, loadedSeq: 0, now: 0)
        // Writes that only create: the state holds as many announcements as the log has lines.
        var takenAt: [Int] = []
        for seq in 1...200 where schedule.takePeriodic(seq: seq, count: seq, now: 0) {
            takenAt.append(seq)
            schedule.finished(seq: seq, written: true)
        }
        #expect(takenAt == [10, 20, 40, 80, 160], "each after as many events as the state held at the one before, never fewer than 10")
        // A store that opens counts from 10 again until it takes one, whatever the state holds:
        // restarts cannot put the next snapshot off and off.
        var reopened = SnapshotSchedule(policy: policy, loadedSeq: 300, now: 0)
        var taken = reopened.takePeriodic(seq: 309, count: 250, now: 0)
        #expect(!taken)
        taken = reopened.takePeriodic(seq: 310, count: 250, now: 0)
        #expect(taken, "10 events after the snapshot it loaded, though the state holds 250")
        reopened.finished(seq: 310, written: true)
        taken = reopened.takePeriodic(seq: 559, count: 3, now: 0)
        #expect(!taken, "then as many as the state held at that one")
        taken = reopened.takePeriodic(seq: 560, count: 3, now: 0)
        #expect(taken)
        reopened.finished(seq: 560, written: true)
        taken = reopened.takePeriodic(seq: 570, count: 3, now: 0)
        #expect(taken, "the state held 3 at the last: 10 events")
    }

    @Test("at close, a snapshot as new as the state but without the search index is written again with it, once")
    func scheduleWithSearch() {
        var schedule = SnapshotSchedule(policy: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), loadedSeq: 0, now: 0)
        var taken = schedule.takeFinal(seq: 0, withSearch: true)
        #expect(!taken, "an empty log's state covers no line: no snapshot of it, with an index or not (its stop warned that it could not write one)")
        taken = schedule.takeFinal(seq: 50)
        #expect(taken)
        schedule.finished(seq: 50, written: true, withSearch: false)
        taken = schedule.takeFinal(seq: 50)
        #expect(!taken, "nothing new, and no index to add")
        taken = schedule.takeFinal(seq: 50, withSearch: true)
        #expect(taken, "the index is new")
        schedule.finished(seq: 50, written: true, withSearch: true)
        taken = schedule.takeFinal(seq: 50, withSearch: true)
        #expect(!taken)
        var loaded = SnapshotSchedule(policy: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), loadedSeq: 50, withSearch: true, now: 0)
        taken = loaded.takeFinal(seq: 50, withSearch: true)
        #expect(!taken, "the loaded snapshot holds it already")
    }
}

/// The first bytes of the snapshot beside the log at `path`: its header.
func snapshotHeader(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: SnapshotFile.path(forLog: path))).prefix(SnapshotFile.headerSize))
}
