import Testing
@testable import AnnouncementsDomain

@Suite struct HTMLTextTests {
    @Test("plain text: tags and comments out, blocks separate words, references decoded, spaces collapsed", arguments: [
        ("<p>Hello, <b>world</b></p>", "Hello, world"),
        ("<p>one</p><p>two</p>", "one two"),
        ("line<br>break", "line break"),
        ("in<b>line</b>", "inline"),
        ("a <!-- hidden <p>x</p> --> b", "a b"),
        ("<script>var s = '<p>no</p>';</script>shown<style>p { color: red }</style>", "shown"),
        ("Fish &amp; chips &lt;3 &eacute;t&eacute; &#233; &#xE9; &ldquo;q&rdquo;", "Fish & chips <3 été é é \u{201C}q\u{201D}"),
        ("an &unknown; name, a lone & and a <3", "an &unknown; name, a lone & and a <3"),
        ("<a href=\"x>y\" title='>'>link</a>", "link"),
        ("  \n\t spaced \n out  ", "spaced out"),
        ("<!DOCTYPE html><html><head><title>T</title></head><body>Body</body></html>", "Body"),
        ("&#0; &#x110000;", "\u{FFFD} \u{FFFD}"),
        ("a&#1;b &#xFFFF; &#99999999999;", "a\u{FFFD}b \u{FFFD} \u{FFFD}"),
        ("&#+65; &#x; &#;", "&#+65; &#x; &#;"),
        // Tag names in any case; the longest known ones; longer, unknown and closing-only names.
        ("<P>one</P><BR>two<SCRIPT>x</Script>three<NoScript>y</noscript>", "one two three"),
        ("a<blockquote>b</blockquote>c<FIGCAPTION>d</figcaption>e", "a b c d e"),
        ("in<blockquotes>line</blockquotes><h7>too</h7>", "inlinetoo"),
        ("</script>kept</style>", "kept"),
    ])
    func plain(html: String, text: String) {
        #expect(HTMLText.plain(html) == text)
    }

    @Test("an excerpt is cut at a word's end with an ellipsis, and reads no further than it needs")
    func excerpt() {
        #expect(HTMLText.excerpt("<p>short</p>") == "short")
        let long = "<p>" + String(repeating: "word ", count: 100) + "</p>"
        let excerpt = HTMLText.excerpt(long, limit: 22)
        #expect(excerpt == "word word word word…")
        #expect(HTMLText.excerpt("<p>" + String(repeating: "x", count: 50) + "</p>", limit: 10) == String(repeating: "x", count: 10) + "…")
        #expect(HTMLText.excerpt("<p>four five six</p>", limit: 9) == "four five…", "the tenth character is a space: the ninth ends a word")
        // A body of megabytes is read only as far as the excerpt goes: its tail never matters.
        let huge = "<p>start</p>" + String(repeating: "<i>a</i>", count: 200_000) + "<p>unclosed"
        #expect(HTMLText.excerpt(huge, limit: 5) == "start…")
    }

    @Test("a body's excerpt read from its start is the one read from the whole of it, whatever stands where the start ends")
    func excerptFromTheStart() {
        let around = HTMLText.excerptPrefix
        // Each body puts something at the end of the start: markup, a reference, an escape, a
        // script or a comment that goes on past it, or text enough before it.
        let bodies = [
            String(repeating: "<b>x</b>", count: around / 8 - 2) + "<p>the text &amp; \"more\"\n words</p>",
            String(repeating: " ", count: around - 3) + "&eacute;t&eacute; and on",
            "<script>" + String(repeating: "a", count: around) + "</script><p>after the script</p>",
            "<!--" + String(repeating: "-", count: around) + "--><p>after the comment</p>",
            "<p>" + String(repeating: "word ", count: 100) + "</p>" + String(repeating: "<i>z</i>", count: around),
            "<a title=\"" + String(repeating: ">", count: around) + "\">link</a> text",
        ]
        for body in bodies {
            let text = JSONText(body)
            #expect(HTMLText.excerpt(of: text) == HTMLText.excerpt(body), "\(body.prefix(40))…")
        }
        #expect(HTMLText.excerpt(of: JSONText("<p>a \"quoted\" word</p>")) == "a \"quoted\" word")
    }
}
