import Testing
@testable import AnnouncementsHTTP

/// Element content as XML 1.0 reads it back: the five entities, CR as a reference, every other
/// character as it is, and a refusal (or U+FFFD) at a character XML cannot carry.
@Suite struct XMLRepresentationTests {
    @Test("escaping writes the five entities and CR as references, copies every other character as it is (letters of any width, emoji, U+FFFD, U+FFFD's neighbours)")
    func escapes() throws {
        let text = "a&b<c>d\"e'f\rg\th\ni é€😀 \u{FFFD}\u{FFFC}\u{EFFF}\u{10FFFF} end"
        var xml = "<t>"
        try XMLRepresentation.escape(text, field: "title", of: 1, into: &xml)
        #expect(xml == "<t>a&amp;b&lt;c&gt;d&quot;e&apos;f&#xD;g\th\ni é€😀 \u{FFFD}\u{FFFC}\u{EFFF}\u{10FFFF} end")
        var empty = ""
        try XMLRepresentation.escape("", field: "title", of: 1, into: &empty)
        #expect(empty.isEmpty)
        var long = ""
        let run = String(repeating: "é", count: 100_000)
        try XMLRepresentation.escape(run + "&" + run, field: "body", of: 1, into: &long)
        #expect(long == run + "&amp;" + run)
    }

    @Test("a character XML 1.0 cannot carry (a control character, U+FFFE, U+FFFF) is a 406 naming the announcement, the field and the character's place", arguments: [
        ("e\u{301}x\u{1}", "U+0001 at character 3"), ("\u{1F}", "U+001F at character 1"),
        ("ab\u{FFFE}", "U+FFFE at character 3"), ("😀\u{FFFF}z", "U+FFFF at character 2"),
    ])
    func refuses(text: String, place: String) {
        var xml = ""
        let error = #expect(throws: APIError.self) { try XMLRepresentation.escape(text, field: "body", of: 7, into: &xml) }
        #expect(error?.status == .notAcceptable)
        #expect(error?.message == "announcement 7's body holds \(place), which XML 1.0 cannot carry: ask for application/json, or have a writer correct the body")
    }

    @Test("the server's own texts get U+FFFD in place of each character XML cannot carry, and the rest escaped")
    func replaces() {
        var xml = ""
        XMLRepresentation.escapeReplacing("\u{0}a\u{FFFF}<\u{1B}\u{FFFE}", into: &xml)
        #expect(xml == "\u{FFFD}a\u{FFFD}&lt;\u{FFFD}\u{FFFD}")
    }
}
