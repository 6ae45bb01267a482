import Foundation
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct EventCodingTests {
    @Test("every event type survives a round trip through its line", arguments: sampleEvents + [
        created(9, id: 9, "Quotes \" and \\ and\nnewlines\tand \u{1} control", body: "Ünïcödé “curly” 😀 </script>"),
        Event(seq: 10, id: 4, at: t0, by: "x", change: .edited(AnnouncementPatch(title: "T", body: .set(""))),
              prev: LineHash(of: Array("previous".utf8))),
    ])
    func roundTrip(event: Event) throws {
        let line = event.encodedLine()
        #expect(try EventParser.parse(line) == event)
        // Whatever we write is JSON that Foundation reads too.
        #expect(try JSONSerialization.jsonObject(with: Data(line)) is [String: Any])
    }

    @Test("writes the documented field order")
    func fieldOrder() {
        var event = created(1, id: 1, "Hi", body: "<p>x</p>")
        event.prev = LineHash(of: Array("x".utf8))
        let line = String(decoding: event.encodedLine(), as: UTF8.self)
        #expect(line == #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:01.000Z","by":"alice","data":{"title":"Hi","body":"<p>x</p>"},"prev":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}"#)
    }

    @Test("reads fields in any order, with whitespace, escapes and unknown fields")
    func lenientReading() throws {
        let line = #" { "extra": {"nested": [1, 2.5e3, true, null, "s"]}, "by": "a\u00e9", "at": "2026-11-21T09:30:00Z", "data": {"body": null, "title": "T\"x\ud83d\ude00", "future": 1}, "id": 7, "type": "edited", "seq": 12 } "#
        let event = try EventParser.parse(Array(line.utf8))
        #expect(event.seq == 12)
        #expect(event.id == 7)
        #expect(event.by == "aé")
        #expect(event.change == .edited(AnnouncementPatch(title: "T\"x😀", body: .clear)))
        #expect(event.prev == nil)
    }

    @Test("a created event's body may be null or absent")
    func createdBody() throws {
        let absent = try EventParser.parse(Array(#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"T"}}"#.utf8))
        let null = try EventParser.parse(Array(#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"T","body":null}}"#.utf8))
        #expect(absent.change == .created(AnnouncementDraft(title: "T", body: nil)))
        #expect(null.change == absent.change)
    }

    static let base = #""seq":1,"id":1,"at":"2026-11-21T09:30:00Z","by":"a""#

    @Test("rejects each kind of bad line with a message naming the problem", arguments: [
        ("", "not a JSON object"),
        ("[1]", "not a JSON object"),
        (#"{"seq":1,"type":"created""#, "invalid JSON"),
        (#"{"seq":1 "type":"created"}"#, "expected ',' or '}'"),
        ("{\(base),\"type\":\"renamed\"}", #"event type "renamed" is not known to this version"#),
        (#"{"type":"deleted","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "missing field `seq`"),
        (#"{"seq":1,"type":"deleted","at":"2026-11-21T09:30:00Z","by":"a"}"#, "missing field `id`"),
        (#"{"seq":"1","type":"deleted","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "field `seq`: expected a positive whole number"),
        (#"{"seq":1.5,"type":"deleted","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "field `seq`: expected a positive whole number"),
        (#"{"seq":0,"type":"deleted","id":1,"at":"2026-11-21T09:30:00Z","by":"a"}"#, "not 0"),
        (#"{"seq":1,"type":"deleted","id":1,"at":"yesterday","by":"a"}"#, "field `at`"),
        ("{\(base),\"type\":\"created\"}", "a created event needs `data`"),
        ("{\(base),\"type\":\"created\",\"data\":{\"body\":\"b\"}}", "missing field `data.title`"),
        ("{\(base),\"type\":\"created\",\"data\":{\"title\":5}}", "field `data.title`: expected a string"),
        ("{\(base),\"type\":\"edited\",\"data\":{}}", "must change"),
        ("{\(base),\"type\":\"edited\",\"data\":{\"title\":null}}", "a title cannot be cleared"),
        ("{\(base),\"type\":\"deleted\",\"data\":{\"title\":\"x\"}}", "carries no `data`"),
        ("{\(base),\"type\":\"deleted\",\"prev\":\"abc\"}", "field `prev`: expected 64"),
        ("{\(base),\"type\":\"deleted\",\"prev\":\"\(String(repeating: "A", count: 64))\"}", "field `prev`: expected 64"),
        ("{\(base),\"type\":\"deleted\",\"prev\":\"\(String(repeating: "0", count: 63))g\"}", "field `prev`: expected 64"),
        ("{\(base),\"type\":\"deleted\",\"seq\":2}", "appears twice"),
        ("{\(base),\"type\":\"deleted\"} trailing", "unexpected text after the JSON object"),
        ("{\(base),\"type\":\"created\",\"data\":{\"title\":\"a\u{1}b\"}}", "control character"),
        ("{\(base),\"type\":\"created\",\"data\":{\"title\":\"\\ud800\"}}", "surrogate"),
    ])
    func rejects(line: String, message: String) {
        #expect {
            try EventParser.parse(Array(line.utf8))
        } throws: { error in
            (error as? LineProblem)?.message.contains(message) == true
        }
    }

    @Test("reads back every hash it writes, digit for digit")
    func hashDigits() throws {
        for text in ["", "x", "previous", String(repeating: "long line ", count: 100)] {
            let hash = LineHash(of: Array(text.utf8))
            let digits = Array(hash.description.utf8)
            #expect(digits.withUnsafeBytes { LineHash(hex: $0) } == hash)
        }
        let known = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        #expect(Array(known.utf8).withUnsafeBytes { LineHash(hex: $0) }?.description == known)
    }

    @Test("rejects bytes that are not UTF-8")
    func invalidUTF8() {
        var line = Array(#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"x"#.utf8)
        line += [0xFF, 0xFE] + Array(#""}}"#.utf8)
        #expect(throws: LineProblem.self) { try EventParser.parse(line) }
    }

    @Test("reads strings exactly as Foundation does", arguments: [
        "plain", "", "with \"quotes\"", "back\\slash", "tab\tnew\nline", "é ü 😀 ✓", "\u{7f}", "a/b",
        String(repeating: "long text without escapes ", count: 40),
        "mixed \u{8} \u{c} \u{1f} end",
    ])
    func stringsAgreeWithFoundation(text: String) throws {
        let event = created(1, id: 1, text.isEmpty ? "t" : text, body: text)
        let line = event.encodedLine()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        let data = try #require(object["data"] as? [String: Any])
        let parsed = try EventParser.parse(line)
        guard case .created(let draft) = parsed.change else { Issue.record("not a created event"); return }
        #expect(draft.body == data["body"] as? String)
        #expect(draft.title == data["title"] as? String)
    }

    @Test("escapes every control character, quote and backslash wherever it falls in an eight-byte word")
    func escapesAtEveryPosition() throws {
        let specials = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) } + ["\"", "\\"]
        for special in specials {
            for position in 0..<17 {
                let text = String(repeating: "a", count: position) + String(special) + String(repeating: "é", count: 9 - position % 9)
                var bytes: [UInt8] = []
                bytes.appendJSONString(text)
                let decoded = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
                #expect(decoded == text, "\(special.unicodeScalars.first?.value ?? 0) at \(position)")
                #expect(bytes.count == text.utf8.count + 2 + (special.asciiValue.map { $0 < 0x20 && !"\n\r\t\u{8}\u{c}".contains(special) ? 5 : 1 } ?? 1))
            }
        }
    }

    @Test("finds the type in a line the store wrote without parsing it, and only there")
    func storedType() {
        for event in sampleEvents {
            let line = event.encodedLine()[...]
            #expect(Event.storedType(inLine: line).map { String(decoding: $0, as: UTF8.self) } == event.type.rawValue)
        }
        for other in [#"{"type":"edited","seq":2}"#, #"{ "seq": 3, "type": "deleted" }"#, #"{"seq":123"#, #"{"seq":1,"type":"cr"#, ""] {
            #expect(Event.storedType(inLine: Array(other.utf8)[...]) == nil, "\(other)")
        }
    }

    @Test("finds the id in a line the store wrote without parsing it, and only there")
    func storedID() {
        for event in sampleEvents {
            #expect(Event.storedID(inLine: event.encodedLine()[...]) == event.id)
        }
        for other in [#"{"seq":2,"type":"edited","id":7}"#, #"{"seq":2,"type":"edited","by":"a","id":7,"#, #"{"seq":2,"type":"edited","id":,"#, #"{ "seq": 3, "type": "deleted", "id": 4, "#, ""] {
            #expect(Event.storedID(inLine: Array(other.utf8)[...]) == nil, "\(other)")
        }
    }
}

@Suite struct EventLayoutTests {
    @Test("an event is no larger than erasure needs: the format byte fits after prev, a sealed digest is boxed")
    func size() {
        // Replay moves millions of events between threads: each byte counts (BENCHMARKS.md). 128 is
        // what an event took before erasure.
        #expect(MemoryLayout<Event>.stride <= 128)
    }
}
