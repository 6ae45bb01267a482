import Foundation
import Testing
@testable import AnnouncementsCore

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
        #expect(report.lastHash == LineHash(of: Array(try lines(of: path)[6].utf8)))
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
        #expect(found.contains { $0.hasPrefix("5: data.title must not be blank") })
        #expect(found.contains { $0.hasPrefix("8: seq 9 leaves a gap") })
        #expect(found.contains { $0.hasPrefix("8: time goes back") })
        #expect(report.events == 8)
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

    @Test("the event index finds each announcement's events, interleaved with others', and each line's bytes")
    func eventIndex() throws {
        var index = EventIndex()
        // seq: id — 1: 1, 2: 2, 3: 1, 4: 3, 5: 2, 6: 1; each line 10 bytes and its newline.
        for (seq, id) in [1, 2, 1, 3, 2, 1].enumerated() {
            index.add(seq: seq + 1, id: id, offset: Int64(seq * 11), length: 10)
        }
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
