import AnnouncementsDomain

/// An announcement's history at `/a/{id}/history`, for auditors and admins: each change, who made
/// it and when, and what it changed in the title and in the text (the body's text without its
/// markup, or its markup where only that changed), word by word.
public struct HistoryPage: WebPage {
    public static let template = "history"

    public struct Entry: Sendable {
        public var type: String
        public var what: String
        public var by: String
        public var at: DisplayTime
        public var reason: String?
        public var textsErased: Bool
        public var titleDiff: TextDiff?
        public var bodyDiff: TextDiff?
    }

    public var chrome: PageChrome
    public var id: Int
    /// The title it has now, when it is live.
    public var currentTitle: String?
    public var live: Bool
    public var canErase: Bool
    public var entries: [Entry]

    /// The most steps all the page's diffs may take together (`TextDiff.maxWork` each at most):
    /// past it, a change shows its old text removed and its new one added whole.
    public static let maxWork = 4 * TextDiff.maxWork

    /// The history of announcement `id` from its `events`, oldest first.
    public init(chrome: PageChrome, id: Int, events: [Event]) {
        self.chrome = chrome
        self.id = id
        var title = ""
        var html = ""
        var live = false
        var erased = false
        var work = Self.maxWork
        func diff(_ old: String, _ new: String, bodies: Bool) -> TextDiff {
            var allowed = min(work, TextDiff.maxWork)
            let used = allowed
            let diff = bodies ? TextDiff(bodies: old, new, work: &allowed) : TextDiff(from: old, to: new, work: &allowed)
            work -= used - max(allowed, 0)
            return diff
        }
        entries = events.map { event in
            var entry = Entry(type: event.type.rawValue, what: "", by: event.by, at: DisplayTime(event.at), textsErased: false)
            switch event.change {
            case .created(let draft):
                entry.what = "Posted"
                let body = draft.body ?? ""
                entry.titleDiff = diff("", draft.title, bodies: false)
                entry.bodyDiff = body.isEmpty ? nil : diff("", body, bodies: true)
                (title, html, live) = (draft.title, body, true)
            case .edited(let patch):
                entry.what = "Changed"
                // Compared byte for byte, as the store records an edit: a title that changed
                // only its Unicode normalization shows what changed.
                if let newTitle = patch.title, !newTitle.utf8.elementsEqual(title.utf8) {
                    entry.titleDiff = diff(title, newTitle, bodies: false)
                    title = newTitle
                }
                if let change = patch.body {
                    let body = change.value ?? ""
                    entry.bodyDiff = diff(html, body, bodies: true)
                    html = body
                }
            case .deleted:
                entry.what = "Deleted"
                live = false
            case .erased(let reason):
                entry.what = "Erased"
                entry.reason = reason
                live = false
                erased = true
            case .sealed(let type, _):
                entry.what = type == .created ? "Posted" : "Changed"
                entry.textsErased = true
                if type == .created { live = true }
            }
            return entry
        }
        // An erased announcement's texts are never shown, even from lines its erasure has not
        // overwritten yet (the store serves those sealed; this page does not rely on it alone).
        if erased {
            for index in entries.indices where entries[index].titleDiff != nil || entries[index].bodyDiff != nil {
                entries[index].titleDiff = nil
                entries[index].bodyDiff = nil
                entries[index].textsErased = true
            }
        }
        currentTitle = live && !erased && !title.isEmpty ? title : nil
        self.live = live && !erased
        canErase = chrome.mayErase && !erased
    }
}
