import AnnouncementsDomain
import Testing
@testable import AnnouncementsWeb

@Suite struct WebPagesTests {
    static let hostile = Announcement(
        id: 7, title: "<script>alert(1)</script> & \"quotes\"", body: "<p onclick=\"x()\">Hi</p>\"><script>alert(2)</script>",
        revision: 9, createdBy: "alice", createdAt: Timestamp(millisecondsSince1970: 1_795_000_000_000), updatedAt: Timestamp(millisecondsSince1970: 1_795_000_600_000)
    )

    @Test("every template compiled into the binary parses")
    func templatesParse() {
        #expect(WebPages.compiled.problems.isEmpty, "\(WebPages.compiled.problems)")
    }

    @Test("the board escapes every value: a title's markup is text, an excerpt's too")
    func boardEscapes() {
        let page = BoardPage(chrome: .signedOut, mode: .now, page: Page(items: [Self.hostile], total: 1), offset: 0, pageSize: 20, seq: 9)
        let html = WebPages.compiled.render(page)
        #expect(html.hasPrefix("<!doctype html>\n<html"), "nothing before the document: \(html.prefix(40).debugDescription)")
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        #expect(!html.contains("<script>alert"))
        #expect(html.contains("<time datetime=\"2026-11-18T11:16:40.000Z\">2026-11-18 11:16 UTC</time></p>"), "an edited one shows when it changed, with nothing after the time (the partial added a line break: \"…PM .\")")
        #expect(html.contains("Changed"))
        #expect(!html.contains("<script>") && html.contains("<script type=\"module\" src=\"/assets/app."), "no inline script, only the module")
    }

    @Test("values are escaped by code point, not by character: a < after a prepended letter, a \" or > before a combining mark, are entities too (a browser reads them as markup)")
    func escapesJoinedMarkup() {
        // Each of these is one Swift Character with its neighbour: U+0D4E (prepended), U+0301 (combining).
        let title = "\u{0D4E}<b>bold</b>\u{0301} \"\u{0301} autofocus onfocus=x \u{0600}<i>"
        let joined = Announcement(
            id: 8, title: title, body: "<p>x</p>\"\u{0301}><b>", revision: 9, createdBy: "alice",
            createdAt: Timestamp(millisecondsSince1970: 1_795_000_000_000), updatedAt: Timestamp(millisecondsSince1970: 1_795_000_000_000)
        )
        let pages = [
            WebPages.compiled.render(BoardPage(chrome: .signedOut, mode: .now, page: Page(items: [joined], total: 1), offset: 0, pageSize: 20, seq: 9)),
            WebPages.compiled.render(AnnouncementPage(chrome: .signedOut, announcement: joined, seq: 9)),
            WebPages.compiled.render(EditorPage.edit(chrome: .signedOut, joined, key: "k")),
            WebPages.compiled.render(ProblemPage(chrome: .signedOut, heading: title, message: title)),
        ]
        for html in pages {
            let bytes = Array(html.utf8)
            for markup in ["<b>", "<i>", "\"\u{0301}", ">\u{0301}"] {
                #expect(!bytes.contains(Array(markup.utf8)), "\(markup.debugDescription) reached the page: \(html)")
            }
            #expect(bytes.contains(Array("\u{0D4E}&lt;b&gt;bold&lt;/b&gt;\u{0301}".utf8)) || bytes.contains(Array("&lt;p&gt;x&lt;/p&gt;&quot;\u{0301}&gt;".utf8)))
        }
    }

    @Test("the editor takes a title as long as the server does (255), not shorter")
    func editorTitleLimit() {
        let html = WebPages.compiled.render(EditorPage.edit(chrome: .signedOut, Self.hostile, key: "k"))
        #expect(html.contains("required maxlength=\"\(ValidationRules.maxTitleLength)\"") && ValidationRules.maxTitleLength == 255)
    }

    @Test("an announcement's body goes into its sandboxed frame's srcdoc, escaped into the attribute: nothing of it reaches the page")
    func bodyInSandboxedFrame() throws {
        let html = WebPages.compiled.render(AnnouncementPage(chrome: .signedOut, announcement: Self.hostile, seq: 9))
        let frame = try #require(html.range(of: "<iframe class=\"body\" sandbox=\"allow-same-origin allow-top-navigation-by-user-activation allow-popups allow-popups-to-escape-sandbox\""), "a sandbox without allow-scripts, whose links a click opens in the window")
        let srcdoc = try #require(html.range(of: "srcdoc=\"", range: frame.upperBound..<html.endIndex))
        let end = try #require(html.range(of: "\"", range: srcdoc.upperBound..<html.endIndex))
        let attribute = String(html[srcdoc.upperBound..<end.lowerBound])
        #expect(attribute.hasPrefix("&lt;!doctype html&gt;"))
        #expect(attribute.contains("&lt;base target=&quot;_top&quot;&gt;"), "its links open in the whole window")
        #expect(attribute.contains("&lt;p onclick=&quot;x()&quot;&gt;Hi&lt;/p&gt;&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"))
        #expect(!html.contains("alert(2)</script>"))
    }

    @Test("what a page offers follows the role: authors change their own, editors any, auditors audit, admins erase")
    func chromeFollowsRoles() {
        let author = PageChrome(name: "arthur", role: .author)
        #expect(author.canCreate && !author.canAudit && !author.mayErase)
        #expect(author.mayChange(createdBy: "arthur") && !author.mayChange(createdBy: "alice"))
        let editor = PageChrome(name: "alice", role: .editor)
        #expect(editor.mayChange(createdBy: "arthur") && !editor.canAudit)
        let auditor = PageChrome(name: "audrey", role: .auditor)
        #expect(!auditor.canCreate && auditor.canAudit && !auditor.mayChange(createdBy: "audrey") && !auditor.mayErase)
        let admin = PageChrome(name: "ada", role: .admin)
        #expect(admin.canCreate && admin.canAudit && admin.mayErase && admin.mayChange(createdBy: "anyone"))
        #expect(!PageChrome.signedOut.signedIn && !PageChrome.signedOut.canCreate && !PageChrome.signedOut.mayChange(createdBy: ""))
    }

    @Test("a board's pages link on with the search or the past moment they show")
    func pagingLinks() {
        let items = (1...20).map { Announcement(id: $0, title: "t\($0)", body: nil, revision: $0, createdBy: "a", createdAt: Timestamp(millisecondsSince1970: 0), updatedAt: Timestamp(millisecondsSince1970: 0)) }
        let search = BoardPage(chrome: .signedOut, mode: .search("fire drill/é"), page: Page(items: items, total: 45), offset: 20, pageSize: 20, seq: 50)
        #expect(search.newer == "/?offset=0&q=fire%20drill%2F%C3%A9" && search.older == "/?offset=40&q=fire%20drill%2F%C3%A9")
        #expect(search.countText == "45 announcements found (21–40)")
        let past = BoardPage(chrome: .signedOut, mode: .past(Timestamp(millisecondsSince1970: 1_795_000_000_000)), page: Page(items: items, total: 20), offset: 0, pageSize: 20, seq: 30)
        #expect(past.newer == nil && past.older == nil && !past.hasPages && !past.live)
        #expect(past.pastValue == "2026-11-18T11:06:40" && past.heading == "The board at 2026-11-18 11:06 UTC")
    }

    @Test("a history's diffs share a budget of steps: once the page has spent it, each later change shows its text removed and added whole, and the page is still whole")
    func historyDiffBudget() {
        let at = { (seconds: Int64) in Timestamp(millisecondsSince1970: 1_795_000_000_000 + seconds * 1000) }
        let body = { (edit: Int) in "<p>" + (0..<3000).map { $0 % 10 == edit % 10 ? "e\(edit)w\($0)" : "w\($0)" }.joined(separator: " ") + "</p>" }
        // Each edit changes a word in ten, all over the text: hundreds of thousands of steps each.
        let events = [Event(seq: 1, id: 1, at: at(0), by: "arthur", change: .created(AnnouncementDraft(title: "Long", body: body(0))))]
            + (1...60).map { Event(seq: $0 + 1, id: 1, at: at(Int64($0)), by: "arthur", change: .edited(AnnouncementPatch(title: nil, body: .set(JSONText(body($0)))))) }
        let page = HistoryPage(chrome: PageChrome(name: "audrey", role: .auditor), id: 1, events: events)
        let diffs = page.entries.dropFirst().compactMap(\.bodyDiff)
        #expect(diffs.count == 60)
        #expect((diffs.first?.parts.count ?? 0) > 100, "the first edits are matched word by word")
        #expect((diffs.last?.parts.count ?? .max) <= 4, "the last ones, once the budget is spent, whole: \(diffs.last?.parts.count ?? 0) parts")
        for (index, diff) in diffs.enumerated() {
            #expect(TextDiffTests.sides(diff) == (HTMLText.plain(body(index)), HTMLText.plain(body(index + 1))), "edit \(index + 1) shows both texts")
        }
    }

    @Test("a history shows each change: who, when, what it did to the title and the text; an erasure with its reason and no text")
    func history() {
        let at = { (seconds: Int64) in Timestamp(millisecondsSince1970: 1_795_000_000_000 + seconds * 1000) }
        let events = [
            Event(seq: 3, id: 2, at: at(0), by: "alice", change: .created(AnnouncementDraft(title: "Lunch", body: "<p>At <b>noon</b></p>"))),
            Event(seq: 5, id: 2, at: at(60), by: "bob", change: .edited(AnnouncementPatch(title: "Lunch moved", body: .set("<p>At one</p>")))),
            Event(seq: 6, id: 2, at: at(120), by: "bob", change: .deleted),
        ]
        let page = HistoryPage(chrome: PageChrome(name: "audrey", role: .auditor), id: 2, events: events)
        #expect(page.entries.map(\.what) == ["Posted", "Changed", "Deleted"])
        #expect(page.entries.map(\.by) == ["alice", "bob", "bob"])
        #expect(page.entries[1].titleDiff?.parts.map(\.text) == ["Lunch", " moved"])
        #expect(page.entries[1].bodyDiff?.parts.filter(\.removed).map(\.text) == ["noon"])
        #expect(page.entries[1].bodyDiff?.parts.filter(\.added).map(\.text) == ["one"])
        #expect(!page.live && page.currentTitle == nil && !page.canErase)
        let erased = HistoryPage(chrome: PageChrome(name: "ada", role: .admin), id: 2, events: [
            Event(seq: 3, id: 2, at: at(0), by: "alice", change: .sealed(.created, digest: LineHash(of: [1]))),
            Event(seq: 9, id: 2, at: at(300), by: "ada", change: .erased(reason: "personal data")),
        ])
        #expect(erased.entries.map(\.what) == ["Posted", "Erased"])
        #expect(erased.entries[0].textsErased && erased.entries[0].titleDiff == nil)
        #expect(erased.entries[1].reason == "personal data")
        #expect(!erased.canErase, "what is erased is not offered again")
        // Lines an erasure has not overwritten yet hold their texts: the page shows none of them.
        let unsealed = HistoryPage(chrome: PageChrome(name: "ada", role: .admin), id: 2, events: [events[0], events[1]] + [
            Event(seq: 9, id: 2, at: at(300), by: "ada", change: .erased(reason: "personal data")),
        ])
        #expect(unsealed.entries.map(\.what) == ["Posted", "Changed", "Erased"])
        #expect(unsealed.entries.allSatisfy { $0.titleDiff == nil && $0.bodyDiff == nil })
        #expect(unsealed.entries.prefix(2).allSatisfy { $0.textsErased })
        let unsealedHTML = WebPages.compiled.render(unsealed)
        #expect(!unsealedHTML.contains("Lunch") && !unsealedHTML.contains("noon"), "\(unsealedHTML)")
        // A title that changed only its normalization (é as e and a combining accent) is a change shown.
        let nfd = HistoryPage(chrome: PageChrome(name: "audrey", role: .auditor), id: 2, events: [
            Event(seq: 3, id: 2, at: at(0), by: "alice", change: .created(AnnouncementDraft(title: "Caf\u{E9}", body: nil))),
            Event(seq: 4, id: 2, at: at(60), by: "alice", change: .edited(AnnouncementPatch(title: "Cafe\u{301}"))),
        ])
        #expect(nfd.entries[1].titleDiff?.parts.filter(\.removed).map(\.text) == ["Caf\u{E9}"])
        #expect(nfd.entries[1].titleDiff?.parts.filter(\.added).map(\.text) == ["Cafe\u{301}"])
        let html = WebPages.compiled.render(page)
        #expect(html.contains("<del>noon</del>") && html.contains("<ins>one</ins>"))
    }
}
