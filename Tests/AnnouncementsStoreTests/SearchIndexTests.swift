import Testing
@testable import AnnouncementsDomain

@Suite struct SearchIndexTests {
    @Test("words are folded: case and diacritics do not count, marks are dropped, anything else separates")
    func words() {
        #expect(SearchWords.words("Café CAFE cafe\u{301} naïve Ærø-Straße, déjà_vu 2026") == ["cafe", "cafe", "cafe", "naive", "ærø", "strasse", "deja", "vu", "2026"])
        #expect(SearchWords.words("ΚΑΛΗΜΈΡΑ Привет Ёлка") == ["καλημερα", "привет", "елка"])
        #expect(SearchWords.words("東京 オフィス") == ["東京", "オフィス"])
        #expect(SearchWords.words("— … !!! ") == [])
        // Invisible format characters inside a word do not split it; a zero-width space does.
        #expect(SearchWords.words("Ankün\u{AD}digung Ankündigung wo\u{200D}rd\u{2060}s \u{FEFF}bom") == ["ankundigung", "ankundigung", "words", "bom"])
        #expect(SearchWords.words("東京\u{200B}オフィス") == ["東京", "オフィス"])
        #expect(SearchWords.words(HTMLText.plain("<p>Ankün&shy;digung</p>")) == ["ankundigung"], "&shy; is a soft hyphen, not a word")
        // A final sigma is a sigma: the word in capitals and in small letters is one.
        #expect(SearchWords.words("ΟΔΟΣ οδος") == ["οδοσ", "οδοσ"])
        // A sharp s is `ss`, small or capital, as Unicode's case folding has it.
        #expect(SearchWords.words("Straße STRASSE STRAẞE strasse") == ["strasse", "strasse", "strasse", "strasse"])
        // A word is cut where its next letter does not fit, as typed with ss or with ß.
        let a47 = String(repeating: "a", count: 47)
        #expect(SearchWords.words(a47 + "ß") == [a47 + "s"])
        #expect(SearchWords.words(a47 + "ßb " + a47 + "ssb") == [a47 + "s", a47 + "s"])
        #expect(SearchWords.words(a47 + "Éb") == [a47 + "e"], "a letter folded to ASCII fits in one byte")
        #expect(SearchWords.words(a47 + "яb") == [a47], "the rest of a word is dropped from the letter that did not fit")
        #expect(SearchWords.words(String(repeating: "a", count: 100)) == [String(repeating: "a", count: SearchWords.maxBytes)])
    }

    @Test("a posting set holds exactly what was inserted and not removed, as a list or a bitmap", arguments: [50, 5000, 20000])
    func postingSet(count: Int) {
        var generator = SystemRandomNumberGenerator()
        var set = PostingSet()
        var expected = Set<UInt32>()
        // Two blocks of 65,536 ids, so that one turns into a bitmap and back.
        for _ in 0..<count {
            let id = UInt32.random(in: 0..<140_000, using: &generator)
            set.insert(id)
            expected.insert(id)
        }
        for id in expected.shuffled().prefix(count * 3 / 4) {
            set.remove(id)
            expected.remove(id)
        }
        var bits = DenseBits(maxId: 140_000)
        set.add(to: &bits)
        #expect(bits.count == expected.count)
        #expect(bits.descending(skipping: 0, limit: .max) == expected.sorted(by: >).map(Int.init))
        #expect(set.maxId == expected.max().map(Int.init) ?? -1)

        // Taking out a set of ids (what a start from a snapshot does to the ones changed since).
        var gone = DenseBits(maxId: 140_000)
        for id in expected.shuffled().prefix(expected.count / 2) {
            gone.insert(Int(id))
            expected.remove(id)
        }
        set.subtract(gone)
        var left = DenseBits(maxId: 140_000)
        set.add(to: &left)
        #expect(left.descending(skipping: 0, limit: .max) == expected.sorted(by: >).map(Int.init))
        #expect(PostingSet(keys: set.keys, blocks: set.blocks) != nil, "a snapshot's copy of it is taken back")
        var twoBlocks = PostingSet()
        twoBlocks.insert(1)
        twoBlocks.insert(70_000)
        #expect(PostingSet(keys: twoBlocks.keys.reversed(), blocks: twoBlocks.blocks.reversed()) == nil, "keys out of order are refused")
    }

    @Test("finds every word, in the title or the body's text; title matches first, each group newest first")
    func search() throws {
        var index = SearchIndex()
        index.add(id: 1, title: "Parking update", body: "<p>The garage closes on Friday</p>")
        index.add(id: 2, title: "Friday lunch", body: "<p>Pizza in the <b>garage</b></p>")
        index.add(id: 3, title: "Garage reopens", body: "<p>From Monday</p>")
        index.add(id: 4, title: "Café", body: "<script>garage()</script><p>Coffee</p>")
        let page = { (text: String) in index.search(try #require(SearchQuery(text)), offset: 0, limit: 10) }
        #expect(try page("garage").ids == [3, 2, 1], "3 has it in the title; 2 and 1 in the body, newest first; 4 only in a script")
        #expect(try page("garage friday").ids == [2, 1])
        #expect(try page("GARAGE fri").ids == [2, 1], "the last word is a prefix")
        #expect(try page("gar friday").ids == [], "only the last word is a prefix")
        #expect(try page("fri ").ids == [], "a query that ends with a space takes its last word whole")
        #expect(try page("cafe").ids == [4])
        #expect(try page("nothing").total == 0)
        #expect(try page("garage").total == 3)
        let second = index.search(try #require(SearchQuery("garage")), offset: 1, limit: 1)
        #expect((second.ids, second.total) == ([2], 3))
    }

    @Test("an edit and a removal take the old words out")
    func changes() throws {
        var index = SearchIndex()
        index.add(id: 1, title: "Old title", body: "<p>old body</p>")
        index.add(id: 2, title: "Other", body: "<p>old</p>")
        index.remove(id: 1, title: "Old title", body: "<p>old body</p>")
        index.add(id: 1, title: "New title", body: nil)
        #expect(index.search(try #require(SearchQuery("old")), offset: 0, limit: 10).ids == [2])
        #expect(index.search(try #require(SearchQuery("title")), offset: 0, limit: 10).ids == [1])
        #expect(index.search(try #require(SearchQuery("body ")), offset: 0, limit: 10).ids == [])
        index.remove(id: 2, title: "Other", body: "<p>old</p>")
        #expect(index.search(try #require(SearchQuery("old")), offset: 0, limit: 10).total == 0)
        #expect(index.wordCount == 2, "words no announcement holds any more are gone: \(index.wordCount)")
    }

    @Test("two halves indexed apart and merged find what one index of all finds")
    func merge() throws {
        let words = ["red", "green", "blue", "rose", "grass", "sky", "café", "crème"]
        var generator = SystemRandomNumberGenerator()
        var whole = SearchIndex()
        var low = SearchIndex()
        var high = SearchIndex()
        // Ids on both sides of a block's end (65,536), as the halves of a large log are.
        for id in Array(1...300) + Array(65_400...65_700) {
            let title = (0..<3).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ")
            let body = "<p>" + (0..<6).map { _ in words.randomElement(using: &generator) ?? "" }.joined(separator: " ") + "</p>"
            whole.add(id: id, title: title, body: body)
            if id < 65_500 { low.add(id: id, title: title, body: body) } else { high.add(id: id, title: title, body: body) }
        }
        low.merge(high)
        #expect(low.count == whole.count)
        #expect(low.wordCount == whole.wordCount)
        for text in ["red", "gr", "blue sky", "creme ro", "cafe"] {
            let query = try #require(SearchQuery(text))
            let merged = low.search(query, offset: 0, limit: 1000)
            let single = whole.search(query, offset: 0, limit: 1000)
            #expect(merged.ids == single.ids, "\(text)")
            #expect(merged.total == single.total)
        }
    }

    @Test("a query of no word is none")
    func emptyQuery() {
        #expect(SearchQuery("  -- ") == nil)
        #expect(SearchQuery("a bc")?.lastIsPrefix == true)
        #expect(SearchQuery("a bc ")?.lastIsPrefix == false)
        #expect(SearchQuery("a bc\u{00A0}")?.lastIsPrefix == false, "any white space ends the last word")
        #expect(SearchQuery("bc b")?.lastIsPrefix == false, "a one-letter word is taken whole")
        #expect(SearchQuery("東")?.lastIsPrefix == true, "one character of three bytes is a prefix")
    }

    @Test("the word table compares the bytes of a word whose hash matches: two words under one hash are told apart, and an empty word is none other")
    func wordTableCompares() {
        let words: [[UInt8]] = [Array("cafe".utf8), Array("cafd".utf8), [], Array("caf".utf8)]
        for (index, word) in words.enumerated() {
            word.withUnsafeBufferPointer { probe in
                #expect(words.indices.filter { WordTable.same(words[$0], probe) } == [index], "\(word)")
            }
        }
        // Every word put under one hash (a collision, as probing meets them): each found by its bytes.
        var table = WordTable()
        for slot in words.indices { table.insert(slot, hash: 7) { _ in 7 } }
        for (index, word) in words.enumerated() {
            let found = word.withUnsafeBufferPointer { probe in table.find(hash: 7) { WordTable.same(words[$0], probe) } }
            #expect(found == index, "\(word)")
        }
        let absent = Array("cafes".utf8).withUnsafeBufferPointer { probe in table.find(hash: 7) { WordTable.same(words[$0], probe) } }
        #expect(absent == nil)
    }
}
