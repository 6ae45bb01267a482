import Testing
@testable import AnnouncementsWeb

@Suite struct TextDiffTests {
    /// The old text (kept and removed parts) and the new one (kept and added parts), from a diff.
    static func sides(_ diff: TextDiff) -> (old: String, new: String) {
        (diff.parts.filter { !$0.added }.map(\.text).joined(), diff.parts.filter { !$0.removed }.map(\.text).joined())
    }

    @Test("a diff marks the words that changed, and keeps the rest as it was", arguments: [
        ("Park in rows A to C.", "Park in rows D to F.", [("Park in rows ", "kept"), ("A", "removed"), ("D", "added"), (" to ", "kept"), ("C.", "removed"), ("F.", "added")]),
        ("", "New text", [("New text", "added")]),
        ("Old text", "", [("Old text", "removed")]),
        ("same words", "same words", [("same words", "kept")]),
        ("one two three", "zero one two three", [("zero ", "added"), ("one two three", "kept")]),
    ])
    func marksChangedWords(old: String, new: String, expected: [(String, String)]) {
        let diff = TextDiff(from: old, to: new)
        let parts = diff.parts.map { ($0.text, $0.removed ? "removed" : $0.added ? "added" : "kept") }
        #expect(parts.map(\.0) == expected.map(\.0) && parts.map(\.1) == expected.map(\.1), "\(parts)")
        #expect(diff.isUnchanged == (old == new))
    }

    @Test("whatever the texts, the kept and removed parts are the old text and the kept and added ones the new")
    func partsRebuildBothTexts() {
        var generator = SystemRandomNumberGenerator()
        let words = ["a", "b", "c", "lunch", "Friday", "é", "🎉", "\n"]
        for _ in 0..<300 {
            let old = (0..<Int.random(in: 0...30, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            let new = (0..<Int.random(in: 0...30, using: &generator)).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            let (rebuiltOld, rebuiltNew) = Self.sides(TextDiff(from: old, to: new))
            #expect(rebuiltOld == old && rebuiltNew == new, "\(old) → \(new)")
        }
    }

    @Test("two bodies are compared by their text, and by their markup where only that changed: no change shows as none")
    func bodies() {
        let text = TextDiff(bodies: "<p>Lunch at <b>noon</b></p>", "<p>Lunch at <b>one</b></p>")
        #expect(text.parts.filter(\.removed).map(\.text) == ["noon"] && text.parts.filter(\.added).map(\.text) == ["one"])
        let markup = TextDiff(bodies: "<p><a href=\"/a\">Menu</a></p>", "<p><a href=\"/b\">Menu</a></p>")
        #expect(!markup.isUnchanged)
        #expect(markup.parts.filter(\.removed).map(\.text) == ["href=\"/a\">Menu</a></p>"], "\(markup.parts)")
        #expect(TextDiff(bodies: "<p>same</p>", "<p>same</p>").isUnchanged)
    }

    @Test("a diff that would take more steps than it is given stops: the changed middle removed and added whole, what is left of the steps given back")
    func outOfWork() {
        let old = (0..<2000).map { "w\($0)" }.joined(separator: " ")
        // A word in ten changed, from the first on: 400 edits over the whole text.
        let new = (0..<2000).map { $0 % 10 == 0 ? "x\($0)" : "w\($0)" }.joined(separator: " ")
        var plenty = 100_000_000
        let fine = TextDiff(from: old, to: new, work: &plenty)
        #expect(fine.parts.filter(\.removed).count == 200 && plenty < 100_000_000 && plenty > 0)
        var little = 10_000
        let whole = TextDiff(from: old, to: new, work: &little)
        #expect(little < 0, "all of it taken")
        // The words after the last change are kept, as by any diff; the rest is removed and added whole.
        #expect(whole.parts.map(\.removed) == [true, false, false] && whole.parts.map(\.added) == [false, true, false], "\(whole.parts.count) parts")
        #expect(whole.parts.last?.text == " w1991 w1992 w1993 w1994 w1995 w1996 w1997 w1998 w1999")
        #expect(Self.sides(whole) == (old, new))
    }

    @Test("past the most edits it matches, the old text is removed and the new added whole")
    func tooManyEdits() {
        let old = (0..<3000).map { "o\($0)" }.joined(separator: " ")
        let new = (0..<3000).map { "n\($0)" }.joined(separator: " ")
        let diff = TextDiff(from: old, to: new)
        #expect(diff.parts.map(\.removed) == [true, false] && diff.parts.map(\.added) == [false, true])
        #expect(Self.sides(diff) == (old, new))
    }
}
