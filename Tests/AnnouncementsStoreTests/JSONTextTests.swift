import Foundation
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct JSONTextTests {
    /// A created event's line with `body` spelled as the JSON string literal `literal` (its bytes).
    static func line(bodyLiteral literal: [UInt8]) -> [UInt8] {
        Array(#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"T","body":"#.utf8)
            + literal + Array("}}".utf8)
    }

    static func body(of line: [UInt8]) throws -> JSONText? {
        guard case .created(let draft) = try EventParser.parse(line).change else { return nil }
        return draft.bodyText
    }

    @Test("text is kept in the store's escaping, read back byte for byte, and decodes to itself", arguments: [
        "", "plain", "with \"quotes\" and \\ backslashes", "tab\tnew\nline\r\u{8}\u{c}", "\u{0}\u{1}\u{1f}\u{7f}",
        "é ü “curly” 😀 ✓ </script>", String(repeating: "<p class=\"x\">café</p>", count: 50),
    ])
    func roundTrip(text: String) throws {
        let json = JSONText(text)
        #expect(json.string == text)
        #expect(json.utf8Count == text.utf8.count)
        let literal = [UInt8(ascii: "\"")] + json.escaped + [UInt8(ascii: "\"")]
        // Foundation reads the same text from those bytes.
        #expect(try JSONSerialization.jsonObject(with: Data(literal), options: .fragmentsAllowed) as? String == text)
        // The parser keeps the line's own bytes.
        #expect(try Self.body(of: Self.line(bodyLiteral: literal))?.escaped == json.escaped)
    }

    @Test("other spellings of a text are read as the text they spell, in the store's escaping", arguments: [
        (#""a\/b""#, "a/b"), (#""caf\u00e9""#, "café"), (#""\u0041\u0042""#, "AB"), (#""line\u000a""#, "line\n"),
        (#""\u001F""#, "\u{1f}"), (#""\ud83d\ude00 ok""#, "😀 ok"), (#""\u0022\u005c""#, "\"\\"),
        // Controls with a short escape are stored with it, not as `\u00XX`.
        (#""\u0008\u0009\u000c\u000d""#, "\u{8}\t\u{c}\r"), (#""\u007f\u0020""#, "\u{7f} "),
    ])
    func otherSpellings(literal: String, text: String) throws {
        let body = try #require(try Self.body(of: Self.line(bodyLiteral: Array(literal.utf8))))
        #expect(body == JSONText(text))
        #expect(body.string == text)
    }

    @Test("a body that is not UTF-8, or holds a raw control character, is rejected wherever it falls", arguments: [
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], [0xE2, 0x82], [0xC3, 0x41], [0x01],
    ] as [[UInt8]])
    func rejectsBadBytes(bad: [UInt8]) {
        for position in 0..<17 {
            let literal = [UInt8(ascii: "\"")] + Array(repeating: UInt8(ascii: "a"), count: position) + bad
                + Array("tail text".utf8) + [UInt8(ascii: "\"")]
            do {
                _ = try EventParser.parse(Self.line(bodyLiteral: literal))
                Issue.record("accepted \(bad) at \(position)")
            } catch {
                #expect(error.message.contains("not valid UTF-8") || error.message.contains("control character"), "\(bad) at \(position): \(error)")
            }
        }
    }

    @Test("bodies of UTF-8's edge bytes are accepted exactly when they are UTF-8, and read as the standard library reads them")
    func agreesWithTheStandardLibrary() throws {
        // Bytes that matter to UTF-8: ASCII, continuation bytes and every kind of lead byte.
        let pool: [UInt8] = [0x41, 0x7E, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF3, 0xF4, 0xF5, 0xFF]
        // Every sequence of up to three of them, and four-byte ones after each kind of four-byte lead.
        var sequences = pool.map { [$0] }
        sequences += sequences.flatMap { head in pool.map { head + [$0] } }
        sequences += sequences.filter { $0.count == 2 }.flatMap { head in pool.map { head + [$0] } }
        for lead: UInt8 in [0xF0, 0xF3, 0xF4, 0xF5] {
            for a: UInt8 in [0x41, 0x80, 0x8F, 0x90, 0xBF] { for b: UInt8 in [0x41, 0x80, 0xBF] { sequences.append([lead, a, b, 0x80]) } }
        }
        var accepted = 0, rejected = 0
        for bytes in sequences {
            let expected = String(validating: bytes, as: UTF8.self)
            if expected == nil { rejected += 1 } else { accepted += 1 }
            // At every place in an eight-byte word.
            for offset in 0..<8 {
                let literal = [UInt8(ascii: "\"")] + Array(repeating: UInt8(ascii: "a"), count: offset) + bytes + [UInt8(ascii: "\"")]
                let body = try? Self.body(of: Self.line(bodyLiteral: literal))
                #expect(body?.string == expected.map { String(repeating: "a", count: offset) + $0 }, "\(bytes.map { String($0, radix: 16) }) after \(offset)")
            }
        }
        // Both outcomes were exercised.
        #expect(accepted > 200)
        #expect(rejected > 500)
    }

    @Test("bodies of escapes and characters, one or two of them, are read as Foundation reads them, in the store's escaping")
    func escapesAgreeWithFoundation() throws {
        let pieces: [String] = [
            "a", "Z", " ", "é", "“", "😀", "\u{7f}", #"\""#, #"\\"#, #"\/"#, #"\n"#, #"\r"#, #"\t"#, #"\b"#, #"\f"#,
            #"\ud83d\ude00"#, #"\u00e9"#, #"\u00E9"#, #"\u0041"#, #"\u007F"#,
        ] + (0..<0x20).flatMap { [String(format: #"\u%04x"#, $0), String(format: #"\u%04X"#, $0)] }
        // Each piece at every place in an eight-byte word, and every pair of pieces at two places.
        var bodies = (0..<8).flatMap { offset in pieces.map { String(repeating: "a", count: offset) + $0 } }
        bodies += [0, 5].flatMap { offset in pieces.flatMap { first in pieces.map { String(repeating: "a", count: offset) + first + $0 } } }
        for spelled in bodies {
            let literal = "\"" + spelled + "\""
            let expected = try #require(try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String)
            let body = try Self.body(of: Self.line(bodyLiteral: Array(literal.utf8)))
            #expect(body?.escaped == JSONText(expected).escaped, "\(literal)")
            #expect(body?.string == expected, "\(literal)")
        }
    }

    @Test("a replayed log keeps bodies in any spelling as the text they spell, across chunks")
    func replayedSpellings() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let spellings = [#""caf\u00e9 \/ \u0041""#, #""plain""#, #""\u000a\n\"""#, #""é😀\ud83d\ude00""#]
        let texts = ["café / A", "plain", "\n\n\"", "é😀😀"]
        var lines: [String] = []
        for (index, spelling) in spellings.enumerated() {
            lines.append(#"{"seq":\#(index + 1),"type":"created","id":\#(index + 1),"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"T","body":\#(spelling)}}"#)
        }
        try write(lines, to: path)
        for chunkSize in [40, 100, 4096] {
            var reader = LogReader(path: path)
            reader.chunkSize = chunkSize
            let model = try reader.replay().model
            #expect(model.announcements.map(\.body) == texts)
            #expect(model.announcements.map(\.bodyText) == texts.map(JSONText.init))
        }
    }

    @Test("a body's length limit counts decoded bytes, not escaped ones")
    func lengthLimit() {
        let rules = ValidationRules(maxBodyBytes: 10)
        #expect(rules.problems(body: JSONText(String(repeating: "\"", count: 10))).isEmpty)
        #expect(rules.problems(body: JSONText(String(repeating: "\t", count: 10))).isEmpty)
        // `\u00XX` is one byte too (only an old log's body still holds such a character).
        #expect(JSONText(String(repeating: "\u{1}", count: 10)).utf8Count == 10)
        let tooLong = rules.problems(body: JSONText(String(repeating: "\"", count: 11)))
        #expect(tooLong.map(\.message) == ["must be at most 10 bytes (it has 11)"])
    }
}
