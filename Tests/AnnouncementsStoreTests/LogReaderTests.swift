import Foundation
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct LogReaderTests {
    @Test("replays a log into the same state as applying its events")
    func replays() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        let replay = try LogReader(path: path).replay()
        #expect(replay.model.seq == 7)
        #expect(Array(replay.model.announcements) == [
            Announcement(id: 1, title: "Welcome aboard", body: "<p>Hello, world</p>", revision: 4, createdBy: "seed", createdAt: at(1), updatedAt: at(4)),
            Announcement(id: 3, title: "Parking", body: nil, revision: 7, createdBy: "alice", createdAt: at(6), updatedAt: at(7)),
        ])
        #expect(replay.tornTail == nil)
        #expect(replay.lastHash == LineHash(link: Array(try lines(of: path).last!.utf8)))
    }

    @Test("stops at a seq or a time")
    func bounds() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        let reader = LogReader(path: path)
        let untilFour = try reader.replay(until: .seq(4))
        #expect(untilFour.model.seq == 4)
        #expect(untilFour.model.count == 2)
        let asOf = try reader.replay(until: .time(sampleEvents[4].at))
        #expect(asOf.model.seq == 5)
        #expect(asOf.model.announcement(id: 2) == nil)
    }

    @Test("delivers every line across chunk boundaries, including lines longer than a chunk", arguments: [50, 300, 4096])
    func chunking(chunkSize: Int) throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var events: [Event] = []
        for seq in 1...120 {
            // Bodies of every length, with escapes and non-ASCII text: the reader copies each out
            // of its chunk after parsing, so a body's place in the chunk must be exact.
            let body = Self.body(seq)
            events.append(seq % 3 == 0 ? edited(seq, id: seq - 1 - (seq - 1) / 3, body: .set(body)) : created(seq, id: seq - seq / 3, "Title \(seq)", body: body))
        }
        try writeLog(events, to: path)
        var reader = LogReader(path: path)
        reader.chunkSize = chunkSize
        var seen: [Event] = []
        let summary = try reader.read { line in
            if case .success(var event) = line.parsed {
                event.prev = nil
                seen.append(event)
            }
            #expect(line.isLast == (line.number == 120))
            return .continue
        }
        #expect(seen == events)
        #expect(summary.lines == 120)
        let model = try reader.replay().model
        #expect(model.count == 80)
        #expect(model.announcement(id: 80)?.body == Self.body(120))
    }

    static func body(_ seq: Int) -> String {
        String(repeating: "x\"é\\\n", count: seq * 7 % 180)
    }

    @Test("names the file and line of a corrupt line", arguments: [
        (3, "not json at all", "not a JSON object"),
        (2, #"{"seq":5,"type":"deleted","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "leaves a gap"),
        (4, #"{"seq":4,"type":"deleted","id":9,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "never created"),
        (3, #"{"seq":3,"type":"moved","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, #"event type "moved" is not known to this version"#),
    ])
    func corruptLine(line: Int, text: String, message: String) throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        var texts = sampleEvents.map { String(decoding: $0.encodedLine(), as: UTF8.self) }
        texts[line - 1] = text
        try write(texts, to: path)
        // Indexed (as a server replays) too: a seq out of order is refused before the index,
        // which takes seqs only in order, sees it.
        for indexing in [false, true] {
            #expect {
                try LogReader(path: path).replay(indexing: indexing)
            } throws: { error in
                guard let error = error as? LogError else { return false }
                return error.kind == .invalidLine && error.line == line && error.description.hasPrefix("\(path):\(line): ")
                    && error.message.contains(message)
            }
        }
    }

    @Test("whether a file still holds a line at its place: what a copy checks once it has read the log")
    func holdsLine() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try write(["first", "second"], to: path)
        #expect(LogReader.holds(Array("second".utf8)[...], at: 6, in: path))
        #expect(!LogReader.holds(Array("secund".utf8)[...], at: 6, in: path))
        #expect(!LogReader.holds(Array("first".utf8)[...], at: 6, in: path))
        try write(["first"], to: path)  // cut back
        #expect(!LogReader.holds(Array("second".utf8)[...], at: 6, in: path))
        try write(["first", "second"], to: path, trailingNewline: false)  // its newline not written
        #expect(!LogReader.holds(Array("second".utf8)[...], at: 6, in: path))
        #expect(!LogReader.holds(Array("second".utf8)[...], at: 6, in: folder.file("none")))
    }

    @Test("reports the bytes after the last newline as a torn line instead of applying them")
    func tornTail() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        let goodSize = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        let fragment = #"{"seq":8,"type":"created","id":4,"at":"2026-11"#
        try appendText(fragment, to: path)
        let replay = try LogReader(path: path).replay()
        #expect(replay.model.seq == 7)
        let torn = try #require(replay.tornTail)
        #expect(torn.offset == Int64(goodSize))
        #expect(torn.line == 8)
        #expect(torn.count == fragment.utf8.count)
    }

    @Test("a last line that ends with its newline was written whole: one that is not JSON is an error naming it, not a torn line", arguments: [
        #"{"seq":8,"type":"created","id":4,"at":"2026-11"#,
        #"[ "seq":8}"#,
    ])
    func wholeLastLineNotJSON(line: String) throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try writeLog(sampleEvents, to: path)
        try appendText(line + "\n", to: path)
        for check in [ChainCheck.off, .refuse] {
            #expect {
                try LogReader(path: path).replay(indexing: true, chainCheck: check)
            } throws: { error in
                guard let error = error as? LogError else { return false }
                return error.kind == .invalidLine && error.line == 8 && error.message.contains("it was written whole")
            }
        }
    }

    @Test("a missing file is a clear error")
    func missingFile() {
        #expect {
            try LogReader(path: "/nonexistent/log.jsonl").replay()
        } throws: { error in
            (error as? LogError)?.kind == .unreadable && "\(error)".contains("no such log file")
        }
    }
}
