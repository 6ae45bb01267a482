import Foundation
import Logging
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct ForbiddenCharacterTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// ESC, BEL, CR, LF, NUL, NEL (U+0085), DEL and CSI (U+009B): C0, DEL and C1.
    static let controls: [(Character, String)] = [
        ("\u{1B}", "U+001B"), ("\u{7}", "U+0007"), ("\r", "U+000D"), ("\n", "U+000A"), ("\u{0}", "U+0000"),
        ("\u{85}", "U+0085"), ("\u{7F}", "U+007F"), ("\u{9B}", "U+009B"),
    ]

    @Test("a title with a control character is refused on every write path, naming the code point and where it is", arguments: controls)
    func titleRefused(control: Character, codePoint: String) async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "a")
        let title = "Fire\(control)drill"
        let refusal = StoreError.invalid([FieldProblem(field: "title", message: "must not contain control characters (\(codePoint) at character 5)")])
        await #expect(throws: refusal) { try await store.create(AnnouncementDraft(title: title), by: "a") }
        await #expect(throws: refusal) { try await store.update(id: 1, AnnouncementPatch(title: title), by: "a") }
        await #expect(throws: refusal) { try await store.update(id: 1, AnnouncementPatch(replacingWith: AnnouncementDraft(title: title)), by: "a") }
        await store.close()
        #expect(try lines(of: path).count == 1, "nothing was appended")
    }

    @Test("a body may hold tab, CR and LF, and no other control character")
    func bodies() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        let kept = try await store.create(AnnouncementDraft(title: "Lines", body: "<p>one</p>\r\n\t<p>two</p>\n"), by: "a")
        #expect(kept.body == "<p>one</p>\r\n\t<p>two</p>\n")
        for (control, codePoint) in Self.controls where !["\r", "\n"].contains(control) {
            let message = "must not contain control characters other than tab, line feed and carriage return (\(codePoint) at character 4)"
            await #expect(throws: StoreError.invalid([FieldProblem(field: "body", message: message)])) {
                try await store.update(id: 1, AnnouncementPatch(body: .set("<p>\(control)</p>")), by: "a")
            }
        }
        await store.close()
    }

    @Test("the place counts characters, and a problem can come with a length problem")
    func places() {
        let rules = ValidationRules(maxBodyBytes: 4)
        #expect(rules.problems(title: "é🇫🇷\r\nx").map(\.message) == ["must not contain control characters (U+000D at character 3)"])
        #expect(rules.problems(title: " \n ").map(\.message) == ["must not be blank"])
        #expect(rules.problems(body: JSONText("abc\u{1B}[2K")).map(\.message) == [
            "must be at most 4 bytes (it has 7)",
            "must not contain control characters other than tab, line feed and carriage return (U+001B at character 4)",
        ])
    }

    @Test("a title of invisible characters is blank; one character with endless combining marks is held to the title's bytes")
    func invisibleAndOverlongTitles() {
        let rules = ValidationRules()
        for invisible in ["\u{200B}", "\u{200B}\u{FEFF}", " \u{AD}\u{2060} ", "\u{3164}", "\u{200D}\u{200C}"] {
            #expect(rules.problems(title: invisible).map(\.message) == ["must not be blank"], "\(invisible.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(ValidationRules.problem(reason: invisible) == "must not be blank")
        }
        #expect(rules.problems(title: "\u{200B}Fire drill").isEmpty, "a visible title may hold them")
        let stacked = "a" + String(repeating: "\u{301}", count: 100_000)
        #expect(stacked.count == 1)
        #expect(rules.problems(title: stacked).map(\.message) == ["must be at most 1020 bytes in UTF-8 (it has 200001)"])
        #expect(ValidationRules.problem(reason: stacked) == "must be at most 1000 characters and 4000 bytes")
        #expect(rules.problems(title: String(repeating: "😀", count: 255)).isEmpty, "255 characters of four bytes each fit")
        #expect(rules.problems(title: String(repeating: "é", count: 256)).map(\.message) == ["must be at most 255 characters (it has 256)"])
    }

    /// Texts with one character at every position of the first 20, among fillers whose bytes look
    /// like what the scan looks for: `£` and NBSP (C2 A3, C2 A0), `…` (E2), fullwidth `！` and the
    /// replacement character (EF BC 81, EF BF BD), an emoji (F0 9F 98 80), and a backslash before
    /// `b`, `f`, `u` or `n` (in the escaped bytes, `\\` then a letter).
    static func placements(of character: Character) -> [String] {
        ["abcdefgh", "££££", "\u{A0}\u{A0}", "……", "！\u{FFFD}", "😀😀", #"\b\f\u\n"#].flatMap { filler -> [String] in
            let base = String(repeating: filler, count: 12)
            return (0..<20).map { offset in
                var text = base
                text.insert(character, at: text.index(text.startIndex, offsetBy: offset))
                return text
            }
        }
    }

    @Test("the word-at-a-time scans find what a scan of each code point finds, at every position", arguments: [
        "\u{0}", "\u{8}", "\t", "\n", "\u{C}", "\r", "\u{1B}", "\u{1F}", " ", "\\", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "é", "\u{2028}",
        "\u{FDCF}", Self.character(0xFDD0), Self.character(0xFDEF), "\u{FDF0}", "\u{FFFD}", Self.character(0xFFFE), Self.character(0xFFFF), "\u{1FFFD}",
        Self.character(0x1FFFE), Self.character(0x2FFFF), Self.character(0x10FFFF), "\u{F0000}",
    ] as [Character])
    func scans(character: Character) {
        for text in Self.placements(of: character) {
            #expect(ForbiddenCharacters.first(inTitle: text) == CharacterPlace.first(in: text, where: ForbiddenCharacters.isForbiddenInTitle), "\(text.debugDescription)")
            #expect(ForbiddenCharacters.first(inBody: JSONText(text)) == CharacterPlace.first(in: text, where: ForbiddenCharacters.isForbiddenInBody), "\(text.debugDescription)")
        }
    }

    /// The character of code point `value` (Swift's literals refuse some noncharacters).
    static func character(_ value: UInt32) -> Character {
        Character(Unicode.Scalar(value)!)
    }

    @Test("noncharacters are refused in titles and bodies, naming the field, the code point and where it is", arguments: [
        (0xFFFE, "U+FFFE"), (0xFFFF, "U+FFFF"), (0xFDD0, "U+FDD0"), (0x10FFFF, "U+10FFFF"),
    ] as [(UInt32, String)])
    func noncharacters(value: UInt32, codePoint: String) async throws {
        let character = Self.character(value)
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "a")
        let message = "must not contain noncharacters (\(codePoint) at character 5): Unicode keeps them out of text, and XML cannot carry U+FFFE or U+FFFF"
        await #expect(throws: StoreError.invalid([FieldProblem(field: "title", message: message)])) {
            try await store.create(AnnouncementDraft(title: "Fire\(character)drill"), by: "a")
        }
        await #expect(throws: StoreError.invalid([FieldProblem(field: "body", message: message)])) {
            try await store.update(id: 1, AnnouncementPatch(body: .set("<p>a\(character)</p>")), by: "a")
        }
        await store.close()
        #expect(try lines(of: path).count == 1, "nothing was appended")
        #expect(ValidationRules.problem(reason: "a\(character)") == message.replacingOccurrences(of: "character 5", with: "character 2"))
    }

    @Test("verify warns of a title with a control character in an old log (the log is sound), and start-up replay still opens it")
    func oldLogs() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try write([
            #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"Fire\u001b[2K\rdrill","body":"a\u0007b"}}"#,
        ], to: path)
        let report = try LogReader(path: path).verify()
        #expect(report.isSound && report.problems.isEmpty)
        #expect(report.ruleWarnings.map { "\($0.line ?? 0): \($0.message)" } == [
            "1: data.title must not contain control characters (U+001B at character 5)",
            "1: data.body must not contain control characters other than tab, line feed and carriage return (U+0007 at character 2)",
        ])
        let store = try await EventStore.open(path: path, logger: quiet)
        #expect(store.snapshot.announcement(id: 1)?.title == "Fire\u{1B}[2K\rdrill")
        // An edit of the other field goes through; the old title stays until a writer replaces it.
        #expect(try await store.update(id: 1, AnnouncementPatch(body: .clear), by: "a").title == "Fire\u{1B}[2K\rdrill")
        _ = try await store.update(id: 1, AnnouncementPatch(title: "Fire drill"), by: "a")
        await store.close()
    }
}
