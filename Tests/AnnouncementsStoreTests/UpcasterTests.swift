import Foundation
import Logging
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// Reading older lines as today's events: format 3 renamed `key` to `idempotency_key`, and every
/// reader goes through `Upcaster.registry`.
@Suite struct UpcasterTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let salt = String(repeating: "ab", count: 32)

    @Test("the registry has one step for each format before the current one, in order")
    func registry() {
        #expect(Upcaster.registry.map(\.from) == Array(1..<Int(Event.currentFormat)))
    }

    @Test("the same keyed edit in each format's shape reads as the same event, in today's shape")
    func eachFormat() throws {
        let head = #"{"seq":4,"type":"edited","id":2,"at":"2026-11-21T09:30:00.000Z","by":"alice","#
        let lines = [
            head + #""key":"retry-7","data":{"title":"T"}}"#,
            head + #""key":"retry-7","data":{"title":"T"},"salt":"\#(salt)","v":2}"#,
            head + #""idempotency_key":"retry-7","data":{"title":"T"},"salt":"\#(salt)","v":3}"#,
            // Fields in any order, as the rules for readers allow.
            #"{"v":2,"key":"retry-7","seq":4,"id":2,"type":"edited","at":"2026-11-21T09:30:00.000Z","by":"alice","salt":"\#(salt)","data":{"title":"T"}}"#,
        ]
        for (line, format) in zip(lines, [1, 2, 3, 2]) {
            let event = try EventParser.parse(Array(line.utf8))
            #expect(event.key == "retry-7", "\(line)")
            #expect(Int(event.format) == format)
            #expect(event.change == .edited(AnnouncementPatch(title: "T")))
        }
    }

    @Test("each format is written in its own shape, and reads back as it was")
    func writesEachShape() throws {
        for format in 1...Event.currentFormat {
            var event = edited(4, id: 2, title: "T")
            event.key = "retry-7"
            event.format = format
            let line = String(decoding: event.encodedLine(salt: Array(salt.utf8).withUnsafeBytes { Salt(hex: $0) }), as: UTF8.self)
            #expect(line.contains(format >= 3 ? #","idempotency_key":"retry-7","# : #","key":"retry-7","#), "\(line)")
            #expect(try EventParser.parse(Array(line.utf8)) == event)
        }
    }

    @Test("a field in the wrong format's shape is an error naming it, not a key silently dropped")
    func wrongShape() {
        let head = #"{"seq":4,"type":"deleted","id":2,"at":"2026-11-21T09:30:00.000Z","by":"alice","#
        let cases = [
            (head + #""key":"k","v":3}"#, "field `key` is named `idempotency_key` since format 3 (this line has \"v\":3): up to format 2 it is `key`"),
            (head + #""idempotency_key":"k","v":2}"#, "field `idempotency_key` belongs to format 3 and later (this line has \"v\":2): up to format 2 it is `key`"),
            (head + #""idempotency_key":"k"}"#, "field `idempotency_key` belongs to format 3 and later (this line has no `v`: format 1): up to format 2 it is `key`"),
            (head + #""idempotency_key":"k","idempotency_key":"k","v":3}"#, "field `idempotency_key` appears twice"),
            (head + #""idempotency_key":"","v":3}"#, "field `idempotency_key` must not be empty"),
            (#"{"seq":4,"type":"created","id":2,"at":"2026-11-21T09:30:00.000Z","by":"alice","data":{"title":"T"},"salt":"\#(salt)"}"#,
             "fields `salt` and `sealed` belong to format 2 and later: this line has no `v`, so it is read as format 1"),
        ]
        for (line, message) in cases {
            do {
                _ = try EventParser.parse(Array(line.utf8))
                Issue.record("read without an error: \(line)")
            } catch {
                #expect(error.message == message)
            }
        }
    }

    /// A log version 1.17 wrote (two seeds, a keyed create, an edit, and the erasure of the second
    /// seed: lines 2 and 4 sealed and padded), kept byte for byte: the links of its lines must not
    /// change, or every log of that version would break its chain.
    static let writtenBy117 = [
        #"{"seq":1,"type":"created","id":1,"at":"2026-11-24T11:25:49.574Z","by":"seed","data":{"title":"Welcome","body":"<p>Hello</p>"},"salt":"c1c095e5b1054cb5fb2925c3dc5864b19cd1364968dd1db578b8bd85bbd6f2f1","v":2}"#,
        #"{"seq":2,"type":"created","id":2,"at":"2026-11-24T11:25:49.574Z","by":"seed","sealed":"dccce411e6b115678b857c39ece299371ea17604acf4e72b805e6b67a9280759","v":2,"prev":"815ec3ed46c3ab10f5ecba151729c0cfbc5b7ce674826305901f4a2ff198d550"                       }"#,
        #"{"seq":3,"type":"created","id":3,"at":"2026-11-24T11:25:51.064Z","by":"editor","key":"drill-1","data":{"title":"Fire drill","body":"<p>10:00</p>"},"salt":"1a5c9d02f33b80eda13760b1dcb62276e10a9c4425c8599470ecce4126795691","v":2,"prev":"9f9187a2fa4f2f9288ee8faeff641c78735e66eaa96223a9df7ea8a0959dd837"}"#,
        #"{"seq":4,"type":"edited","id":2,"at":"2026-11-24T11:25:51.073Z","by":"editor","sealed":"ac895d5a6eae6d8901b12190a0e4742816f5c1744283fac1a89ae053901214b4","v":2,"prev":"2515d4f8de2e54977d2378fb62a27c02e8b4c4e09236520edf498238b5d2e645"                            }"#,
        #"{"seq":5,"type":"erased","id":2,"at":"2026-11-24T11:25:51.081Z","by":"root","data":{"reason":"test"},"salt":"097703590b962b05964f989130ea2ffc720e1608f64582a9a578341fe18b079b","v":2,"prev":"852c0b737a1511056859f65e9fd76236b6ccdeee8d691f8e25f6b6f518b4d827"}"#,
    ]

    @Test("lines 1.17 wrote keep their links: the chain of a format-2 log still holds, and `v` is part of what a link covers")
    func format2Links() throws {
        let lines = Self.writtenBy117.map { Array($0.utf8) }
        for (before, line) in zip(lines, lines.dropFirst()) {
            #expect(try EventParser.parse(line).prev == LineHash(link: before))
        }
        #expect(try lines.allSatisfy { try EventParser.parse($0).format == 2 })
        #expect(try EventParser.parse(lines[2]).key == "drill-1")
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try Data(lines.flatMap { $0 + [UInt8(ascii: "\n")] }).write(to: URL(fileURLWithPath: path))
        let report = try LogReader(path: path).verify()
        #expect(report.isSound && report.erasedLines == 2 && report.sealed == 5 && report.unsealedLines.isEmpty, "\(report.problems)")
        // The head 1.17's `verify` printed for it.
        #expect(report.head?.description == "5:c5c300f34ac304c5c275522b4895108b5891cd78e779ee19de50209a4b4fbc9a")
        let asFormat3 = Self.writtenBy117[0].replacingOccurrences(of: #""v":2}"#, with: #""v":3}"#)
        #expect(asFormat3 != Self.writtenBy117[0])
        #expect(LineHash(link: Array(asFormat3.utf8)) != LineHash(link: lines[0]))
        // A format this version does not know, even one that only looks like a known one, is not
        // linked as a sealing format.
        for other in [#""v":23}"#, #""v":02}"#, #""v":1}"#] {
            let line = Array(Self.writtenBy117[0].replacingOccurrences(of: #""v":2}"#, with: other).utf8)
            #expect(LineHash(link: line) == LineHash(of: line), "\(other)")
        }
    }

    /// Writes `events` in `format` as the store does: salted, linked by their sealed forms.
    private func writeSalted(_ events: [Event], format: UInt8, to path: String) throws {
        var salts = SaltSource()
        var prev: LineHash?
        var text: [UInt8] = []
        for var event in events {
            event.format = format
            event.prev = prev
            let line = event.encodedLine(salt: event.hasData ? salts.salt() : nil)
            prev = LineHash(link: line)
            text += line + [UInt8(ascii: "\n")]
        }
        try Data(text).write(to: URL(fileURLWithPath: path))
    }

    /// The events of a log as version 1.17 wrote it, one with an idempotency key.
    private var keyedEvents: [Event] {
        var events = [
            created(1, id: 1, "Welcome", body: "<p>Hello</p>", by: "seed"),
            created(2, id: 2, "Fire drill", body: "<p>10:00</p>", by: "alice"),
            edited(3, id: 1, title: "Welcome aboard"),
        ]
        events[1].key = "drill-1"
        return events
    }

    /// A log as version 1.17 wrote it: format-2 lines, salted, linked by their sealed forms, one
    /// with an idempotency key under its old name.
    private func format2Log(at path: String) throws {
        try writeSalted(keyedEvents, format: 2, to: path)
        let written = try lines(of: path)
        #expect(written[1].contains(#""by":"alice","key":"drill-1","data":"#))
        #expect(written[1].hasSuffix(#""v":2,"prev":"\#(LineHash(link: Array(written[0].utf8)))"}"#))
    }

    @Test("a log written in format 2 opens as it is: its old key still answers a repeat, new lines are in format 3, the chain runs through both, and upgrade leaves it alone")
    func olderLog() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try format2Log(at: path)
        let old = try lines(of: path)

        var store = try await EventStore.open(path: path, logger: quiet)
        let drill = try #require(store.snapshot.announcement(id: 2))
        // The repeat of the request that wrote line 2 is answered from it: the key was read.
        let repeated = try await store.create(AnnouncementDraft(title: "Fire drill", body: "<p>10:00</p>"), by: "alice", key: "drill-1")
        #expect(repeated == drill)
        await #expect(throws: StoreError.keyReused(key: "drill-1", seq: nil)) {
            try await store.create(AnnouncementDraft(title: "Fire drill"), by: "bob", key: "drill-1")
        }
        _ = try await store.update(id: 2, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "drill-2")
        #expect(store.snapshot.seq == 4)
        let history = try #require(try await store.history(id: 2))
        #expect(history.map { $0.event.key } == ["drill-1", "drill-2"])
        #expect(history.map { $0.event.format } == [2, 3])
        await store.close()

        let now = try lines(of: path)
        #expect(now.dropLast() == old[...], "old lines are never rewritten to be read")
        #expect(now[3].contains(#""by":"alice","idempotency_key":"drill-2","data":"#) && now[3].contains(#""v":3,"prev":""#))
        let report = try LogReader(path: path).verify()
        #expect(report.isSound && report.unsealedLines.isEmpty, "\(report.problems)")

        // The same key after a restart, read from a format-3 line this time, and from a format-2 one.
        store = try await EventStore.open(path: path, logger: quiet)
        #expect(try await store.create(AnnouncementDraft(title: "Fire drill", body: "<p>10:00</p>"), by: "alice", key: "drill-1") == drill)
        #expect(try await store.update(id: 2, AnnouncementPatch(title: "Fire drill moved"), by: "alice", key: "drill-2").title == "Fire drill moved")
        #expect(store.snapshot.seq == 4)
        // Format 2 seals: erasing works on it without an upgrade.
        _ = try await store.erase(id: 2, by: "root", reason: "test")
        await store.close()
        #expect(try LogReader(path: path).verify().isSound)

        let outcome = try LogUpgrade.upgrade(path: path, rules: ValidationRules())
        #expect(outcome.rewritten == 0 && outcome.oldHead == outcome.newHead, "a log that can be erased is not rewritten")
    }

    @Test("history shows an old line's key as today's event has it, and replay builds the same state from either shape")
    func readersAgree() throws {
        let folder = TemporaryFolder()
        let old = folder.file("old.jsonl"), new = folder.file("new.jsonl")
        try format2Log(at: old)
        try writeSalted(keyedEvents, format: Event.currentFormat, to: new)
        #expect(try lines(of: new)[1].contains(#""by":"alice","idempotency_key":"drill-1","data":"#))
        for path in [old, new] {
            var events: [Event] = []
            try LogReader(path: path).history(HistoryFilter()) { events.append($0.event) }
            #expect(events.map(\.key) == [nil, "drill-1", nil])
            #expect(events.map { var event = $0; event.format = 0; event.prev = nil; return event } == keyedEvents.map { var event = $0; event.format = 0; return event })
        }
        #expect(try Array(LogReader(path: old).replay().model.announcements) == Array(LogReader(path: new).replay().model.announcements))
    }
}
