import Testing
@testable import AnnouncementsCLI

@Suite struct TextTableTests {
    @Test("columns are padded to what a terminal shows: a CJK character or an emoji takes two, an accent on its letter none")
    func wideCharacters() {
        var table = TextTable("ID", "TITLE", "BY")
        table.add("1", "Fire drill", "alice")
        table.add("2", "避難訓練", "bob")
        table.add("3", "Cafe\u{301} 🎉", "carol")
        #expect(table.rendered == """
            ID  TITLE       BY
            1   Fire drill  alice
            2   避難訓練    bob
            3   Café 🎉     carol
            """)
    }

    @Test("a title cut to a width is cut by columns, its ellipsis one of them")
    func truncation() {
        #expect("避難訓練のお知らせ".truncated(to: 7) == "避難訓…")
        #expect("Fire drill on Thursday".truncated(to: 7) == "Fire d…")
        #expect("避難訓練".truncated(to: 8) == "避難訓練")
        #expect("避難訓練".columns == 8 && "Café".columns == 4 && "🎉".columns == 2)
    }

    @Test("a running table widens a column by columns too")
    func running() {
        var table = RunningTable(widths: [2, 4])
        #expect(table.line(["1", "避難", "x"]) == "1   避難  x")
        #expect(table.line(["2", "ab", "y"]) == "2   ab    y")
    }
}
