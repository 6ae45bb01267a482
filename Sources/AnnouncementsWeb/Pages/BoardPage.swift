import AnnouncementsDomain

/// The board at `/`: a page of announcements, newest first, or of those a search found, or of the
/// board as it was at a past moment.
public struct BoardPage: WebPage {
    public static let template = "board"

    /// One announcement in the list.
    public struct Item: Sendable {
        public var id: Int
        public var title: String
        public var href: String
        /// Whether it was changed after it was posted: `at` is then when.
        public var edited: Bool
        public var at: DisplayTime
        public var excerpt: String?
    }

    /// An announcement that existed at the past moment shown, erased since.
    public struct Erased: Sendable {
        public var id: Int
        public var href: String
        public var by: String
        public var at: DisplayTime
        public var reason: String

        public init(id: Int, by: String, at: Timestamp, reason: String) {
            self.id = id
            href = "/a/\(id)/history"
            self.by = by
            self.at = DisplayTime(at)
            self.reason = reason
        }
    }

    /// What the board shows.
    public enum Mode: Sendable {
        case now
        case search(String)
        case past(Timestamp)
    }

    public var chrome: PageChrome
    public var heading: String
    /// The window's title.
    public var pageTitle: String
    public var query: String
    /// The past moment as a `datetime-local` value (UTC), for the form.
    public var pastValue: String
    public var isPast: Bool
    public var problem: String?
    /// The log's seq the page shows: where its live updates start.
    public var seq: Int
    /// Whether the page follows the log (not a past board).
    public var live: Bool
    public var countText: String
    public var items: [Item]
    public var hasPages: Bool
    public var newer: String?
    public var older: String?
    public var hasErased: Bool
    public var erased: [Erased]

    /// The board for `page` of announcements, `offset` into them `pageSize` at a time.
    public init(chrome: PageChrome, mode: Mode, page: Page<Announcement>, offset: Int, pageSize: Int, seq: Int, erased: [Erased] = [], problem: String? = nil) {
        self.chrome = chrome
        self.problem = problem
        self.seq = seq
        self.erased = erased
        hasErased = !erased.isEmpty
        items = page.items.map { announcement in
            let edited = announcement.updatedAt != announcement.createdAt
            let excerpt = announcement.excerpt
            return Item(
                id: announcement.id, title: announcement.title, href: "/a/\(announcement.id)", edited: edited,
                at: DisplayTime(edited ? announcement.updatedAt : announcement.createdAt), excerpt: excerpt.isEmpty ? nil : excerpt
            )
        }
        let shown = items.isEmpty ? "" : " (\(offset + 1)–\(offset + items.count))"
        let count = "\(page.total) announcement\(page.total == 1 ? "" : "s")"
        let parameter: String
        switch mode {
        case .now:
            heading = "Announcements"
            query = ""
            pastValue = ""
            isPast = false
            live = true
            countText = page.total == 0 ? "No announcements yet." : count + shown
            parameter = ""
        case .search(let text):
            heading = text.isEmpty ? "Search" : "Search: \(text)"
            query = text
            pastValue = ""
            isPast = false
            live = true
            // A search refused (`problem` says why) found nothing, because it was not made.
            countText = problem != nil ? "No search was made." : page.total == 0 ? "Nothing found for “\(text)”." : "\(count) found\(shown)"
            parameter = "&q=" + QueryText.encoded(text)
        case .past(let time):
            let display = DisplayTime(time)
            heading = "The board at \(display.text)"
            query = ""
            pastValue = String(display.iso.prefix(19))
            isPast = true
            live = false
            countText = page.total == 0 ? "No announcements then." : count + " then" + shown
            parameter = "&asOf=" + display.iso
        }
        pageTitle = isPast || !query.isEmpty ? heading + " · Announcements" : "Announcements"
        newer = offset > 0 ? "/?offset=\(max(0, offset - pageSize))\(parameter)" : nil
        older = offset + items.count < page.total ? "/?offset=\(offset + items.count)\(parameter)" : nil
        hasPages = newer != nil || older != nil
    }
}
