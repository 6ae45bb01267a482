import Foundation
import Logging
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct AuditTests {
    func sampleLog() throws -> (TemporaryFolder, String) {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        return (folder, path)
    }

    @Test("history of one announcement shows each change with the state before and after")
    func historyOfOne() throws {
        let (folder, path) = try sampleLog()
        _ = folder
        var entries: [HistoryEntry] = []
        try LogReader(path: path).history(HistoryFilter(id: 1)) { entries.append($0) }
        #expect(entries.map(\.event.seq) == [1, 3, 4])
        #expect(entries[1].before?.title == "Welcome")
        #expect(entries[1].after?.title == "Welcome aboard")
        #expect(entries[2].before?.body == "<p>Hello</p>")
        #expect(entries[2].after?.body == "<p>Hello, world</p>")
    }

    @Test("history includes deleted announcements and filters by writer, type and range")
    func historyFilters() throws {
        let (folder, path) = try sampleLog()
        _ = folder
        func seqs(_ filter: HistoryFilter) throws -> [Int] {
            var seqs: [Int] = []
            try LogReader(path: path).history(filter) { seqs.append($0.event.seq) }
            return seqs
        }
        #expect(try seqs(HistoryFilter(id: 2)) == [2, 5])
        #expect(try seqs(HistoryFilter(by: "bob")) == [3, 4, 7])
        #expect(try seqs(HistoryFilter(type: .deleted)) == [5])
        #expect(try seqs(HistoryFilter(since: .seq(3), until: .seq(5))) == [3, 4, 5])
        #expect(try seqs(HistoryFilter(since: .time(sampleEvents[5].at))) == [6, 7])
        #expect(try seqs(HistoryFilter(id: 99)) == [])
    }

    @Test("verify reports a sound log with its summary")
    func verifiesSound() throws {
        let (folder, path) = try sampleLog()
        _ = folder
        let report = try LogReader(path: path).verify()
        #expect(report.isSound)
        #expect(report.events == 7)
        #expect(report.live == 2)
        #expect(report.sealed == 7)
        #expect(report.lastHash == LineHash(link: Array(try lines(of: path)[6].utf8)))
    }

    @Test("verify detects a line changed after it was written")
    func detectsTampering() throws {
        let (folder, path) = try sampleLog()
        _ = folder
        var text = try lines(of: path)
        text[2] = text[2].replacingOccurrences(of: "Welcome aboard", with: "Welcome abroad")
        try write(text, to: path)
        let report = try LogReader(path: path).verify()
        #expect(!report.isSound)
        #expect(report.problems.map(\.line) == [4])
        #expect(report.problems[0].message.contains("does not match the SHA-256 of line 3"))
        // Replay does not check the chain: the tampered line still reads as a valid event.
        #expect(try LogReader(path: path).replay().model.announcement(id: 1)?.title == "Welcome abroad")
    }

    @Test("verify accepts unsealed lines but reports them, and collects every problem")
    func unsealedAndProblems() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var text = sampleEvents.map { String(decoding: $0.encodedLine(), as: UTF8.self) }  // no prev at all
        let unsealed = try LogReader(path: { try write(text, to: path); return path }()).verify()
        #expect(unsealed.isSound)
        #expect(unsealed.sealed == 1)
        #expect(unsealed.unsealedLines == [2, 3, 4, 5, 6, 7])

        text[1] = "garbage"
        text[4] = #"{"seq":5,"type":"edited","id":2,"at":"2026-11-21T09:30:05.000Z","by":"x","data":{"title":" "}}"#
        text.append(#"{"seq":9,"type":"created","id":4,"at":"2020-01-01T00:00:00Z","by":"x","data":{"title":"Old"}}"#)
        try write(text, to: path)
        let report = try LogReader(path: path).verify()
        let found = report.problems.map { "\($0.line ?? 0): \($0.message)" }
        #expect(found.contains { $0.hasPrefix("2: not a JSON object") })
        #expect(report.ruleWarnings.map { "\($0.line ?? 0): \($0.message)" } == ["5: data.title must not be blank"], "a rule's breach is a warning")
        #expect(found.contains { $0.hasPrefix("8: seq 9 leaves a gap") })
        #expect(found.contains { $0.hasPrefix("8: time goes back") })
        #expect(report.events == 8)
    }

    @Test("verify reports an edit that changes nothing (the store never writes one), byte for byte", arguments: [
        (#""data":{"title":"Welcome aboard"}"#, "this title", true),
        (#""data":{"title":"Welcome aboard","body":"<p>Hello, world</p>"}"#, "this title and body", true),
        (#""data":{"body":"<p>Hello, world</p>"}"#, "this body", true),
        (#""data":{"title":"Welcome aboard!"}"#, "", false),
        (#""data":{"body":null}"#, "", false),
        (#""data":{"title":"Welcome abo\u0061rd"}"#, "this title", true),
    ])
    func noOpEdit(data: String, what: String, isProblem: Bool) throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var text = sampleEvents.prefix(4).map { String(decoding: $0.encodedLine(), as: UTF8.self) }
        text.append(#"{"seq":5,"type":"edited","id":1,"at":"2026-11-21T09:31:00.000Z","by":"x",\#(data)}"#)
        try write(text, to: path)
        let report = try LogReader(path: path).verify()
        let found = report.problems.map { "\($0.line ?? 0): \($0.message)" }
        if isProblem {
            #expect(found == ["5: an `edited` event that changes nothing: announcement 1 already has \(what) (the store never writes one)"])
        } else {
            #expect(found.isEmpty, "\(found)")
        }
    }

    /// A sealed log of `count` creates, as the store writes it.
    func sealedLog(_ count: Int) throws -> (TemporaryFolder, String) {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog((1...count).map { created($0, id: $0, "Note \($0)") }, to: path)
        return (folder, path)
    }

    /// `line` without its `"prev":"…"` member.
    func strippingPrev(_ line: String) -> String {
        line.replacing(/,"prev":"[0-9a-f]{64}"/, with: "")
    }

    @Test("a line changed, and `prev` stripped from every line after it to hide the change, is not sound")
    func strippedPrevAfterTampering() throws {
        let (folder, path) = try sealedLog(12)
        _ = folder
        var text = try lines(of: path)
        text[9] = text[9].replacingOccurrences(of: "Note 10", with: "Note X")
        for index in 10..<12 { text[index] = strippingPrev(text[index]) }
        #expect(text[10] != (try lines(of: path))[10], "the test stripped something")
        try write(text, to: path)
        let report = try LogReader(path: path).verify()
        #expect(!report.isSound)
        #expect(report.problems.map(\.line) == [11, 12])
        #expect(report.problems.allSatisfy { $0.message.hasPrefix("no `prev`, but the hash chain runs from line 2") })
        #expect(report.unsealedLines == [])
    }

    @Test("lines without `prev` are accepted only before the chain starts: an old log sealed from some line on")
    func unsealedPrefix() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let events = (1...6).map { created($0, id: $0, "Note \($0)") }
        // Lines 1-3 written before the chain existed; from line 4 on, each links to the one before.
        var text = events[..<3].map { String(decoding: $0.encodedLine(), as: UTF8.self) }
        for var event in events[3...] {
            event.prev = LineHash(of: Array(text[text.count - 1].utf8))
            text.append(String(decoding: event.encodedLine(), as: UTF8.self))
        }
        try write(text, to: path)
        let report = try LogReader(path: path).verify()
        #expect(report.isSound)
        #expect(report.unsealedLines == [2, 3])
        #expect(report.sealed == 4)

        text[5] = strippingPrev(text[5])
        try write(text, to: path)
        let stripped = try LogReader(path: path).verify()
        #expect(stripped.problems.map { "\($0.line ?? 0): \($0.message.prefix(46))" } == ["6: no `prev`, but the hash chain runs from line 4"])
    }

    @Test("a line of format 2 or later without `prev` after line 1 is a problem: stripping every `prev` does not pass for a log older than the chain")
    func strippedChain() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, seed: (1...5).map { AnnouncementDraft(title: "Note \($0)") }, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        await store.close()
        let stripped = try lines(of: path).map(strippingPrev)
        #expect(!stripped.contains { $0.contains("prev") })
        try write(stripped, to: path)
        let report = try LogReader(path: path).verify()
        #expect(report.problems.map(\.line) == [2, 3, 4, 5])
        #expect(report.problems.first?.message.hasPrefix("no `prev` on a line of format \(Event.currentFormat): the store writes `prev` on every line after line 1") == true)
        // Upgrade does not chain such a log again: that would turn the evidence of a change into a sound log.
        let refused = #expect(throws: LogError.self) { try LogUpgrade.upgrade(path: path, rules: ValidationRules()) }
        #expect(refused?.message.hasPrefix("the log is not sound (4 problems; the first: ") == true, "\(refused?.message ?? "")")
    }

    @Test("a recorded head proves the log was not cut back or rewritten up to it")
    func expectedHead() throws {
        let (folder, path) = try sealedLog(12)
        _ = folder
        let original = try lines(of: path)
        let recorded = try #require(try LogReader(path: path).verify().head)
        #expect(recorded == LogHead(seq: 12, hash: LineHash(of: Array(original[11].utf8))))

        // The log as it was, and the log grown since: the head is in it, and the chain links on to it.
        let same = try LogReader(path: path).verify(expecting: recorded)
        #expect(same.isSound && same.holdsExpectedHead == true)
        let earlier = LogHead(seq: 5, hash: LineHash(of: Array(original[4].utf8)))
        #expect(try LogReader(path: path).verify(expecting: earlier).holdsExpectedHead == true)

        // Cut back: a sound chain, but the recorded line is gone.
        try write(Array(original[..<10]), to: path)
        #expect(try LogReader(path: path).verify().isSound, "the chain alone cannot tell")
        let cut = try LogReader(path: path).verify(expecting: recorded)
        #expect(!cut.isSound && cut.holdsExpectedHead == false)
        #expect(cut.problems.map(\.description) == ["\(path): the log ends at seq 10, before the recorded head 12: it was cut back (restore it from a backup that holds \(recorded))"])

        // The last line rewritten: a sound chain (nothing comes after it), but not the recorded line.
        var rewritten = original
        rewritten[11] = rewritten[11].replacingOccurrences(of: "Note 12", with: "Note X")
        try write(rewritten, to: path)
        #expect(try LogReader(path: path).verify().isSound, "the chain alone cannot tell")
        let changed = try LogReader(path: path).verify(expecting: recorded)
        #expect(!changed.isSound && changed.holdsExpectedHead == false)
        #expect(changed.problems.map(\.line) == [12])
        #expect(changed.problems.first?.message.contains("not the recorded head's \(recorded.hash): the log was rewritten") == true)

        // An earlier line rewritten with every later `prev` recomputed: only the head can tell.
        var events = try original.map { try EventParser.parse(Array($0.utf8)) }
        events[6] = created(7, id: 7, "Note X")
        try writeLog(events, to: path)
        #expect(try LogReader(path: path).verify().isSound, "the chain alone cannot tell")
        #expect(try LogReader(path: path).verify(expecting: recorded).problems.map(\.line) == [12])

        // A line removed: the head names the last line's seq, not the count of lines; the recorded
        // head is found by its seq; a removed head line is told as removed, not as a cut.
        var removed = original
        removed.remove(at: 3)
        try write(removed, to: path)
        let gap = try LogReader(path: path).verify(expecting: recorded)
        #expect(gap.head == recorded && gap.holdsExpectedHead == true && !gap.isSound, "\(String(describing: gap.head))")
        removed = original
        removed.remove(at: 11)
        removed.append(original[11].replacingOccurrences(of: #""seq":12"#, with: #""seq":13"#))
        try write(removed, to: path)
        let moved = try LogReader(path: path).verify(expecting: recorded)
        #expect(moved.head?.seq == 13 && moved.holdsExpectedHead == false)
        #expect(moved.problems.last?.description == "\(path): the log has no line of seq 12, the recorded head's: it was removed (restore the log from a backup that holds \(recorded))")
    }

    @Test("a head reads and writes as SEQ:SHA256, and nothing else reads as one", arguments: [
        "", "12", "12:", ":3f4d", "0:HASH", "-1:HASH", "x:HASH", "12:HASHx", "12:HASH:", "12:\(String(repeating: "g", count: 64))",
    ])
    func headForm(text: String) throws {
        let hash = LineHash(of: Array("a line".utf8))
        let head = LogHead(seq: 12, hash: hash)
        #expect(LogHead(head.description) == head)
        #expect(LogHead("12:\(hash.description.uppercased())") == head)
        #expect(LogHead(text.replacingOccurrences(of: "HASH", with: hash.description)) == nil)
    }

    @Test("verify notes, but does not fail on, a partial last line")
    func partialLine() throws {
        let (folder, path) = try sampleLog()
        _ = folder
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"seq":8,"#.utf8))
        try handle.close()
        let report = try LogReader(path: path).verify()
        #expect(report.isSound)
        #expect(report.partialTail == 9)
        #expect(report.events == 7)
    }

    @Test("the event index finds each announcement's events, interleaved with others', each line's bytes and its tag")
    func eventIndex() throws {
        var index = EventIndex()
        let links = (1...6).map { LineHash(of: Array("line \($0)".utf8)) }
        // seq: id — 1: 1, 2: 2, 3: 1, 4: 3, 5: 2, 6: 1; each line 10 bytes and its newline. Line 4's
        // link is not known when it is added (as in a replay): it is learnt after.
        for (seq, id) in [1, 2, 1, 3, 2, 1].enumerated() {
            index.add(seq: seq + 1, id: id, offset: Int64(seq * 11), length: 10, link: seq == 3 ? nil : links[seq])
        }
        #expect(index.lineTag(of: 4) == .unknown)
        index.learn(links[3], of: 4)
        #expect((1...6).map { index.lineTag(of: $0) } == links.map(\.tag))
        #expect(index.lineTag(of: 7) == .unknown && index.lineTag(of: 0) == .unknown)
        #expect(links[0].tag.description == String(links[0].description.prefix(8)))
        #expect(index.seqs(of: 1) == [1, 3, 6])
        #expect(index.seqs(of: 2) == [2, 5])
        #expect(index.seqs(of: 3) == [4])
        #expect(index.lastSeq(of: 1) == 6)
        #expect(index.seqs(of: 4) == nil)
        #expect(index.lastSeq(of: 0) == nil)
        #expect(index.lastSeq == 6)
        let one = try #require(index.span(3...3)), two = try #require(index.span(5...6))
        #expect(one == (offset: 22, count: 11))
        #expect(two == (offset: 44, count: 22))
        #expect(index.span(6...7) == nil)
    }
}
