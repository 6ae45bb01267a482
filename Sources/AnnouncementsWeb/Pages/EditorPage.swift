import AnnouncementsDomain

/// The form that writes an announcement (`/new`) or changes one (`/a/{id}/edit`), with a preview
/// of the text as readers will see it, the problems of a refused write by field, and, when
/// someone else changed the announcement meanwhile, what they changed against what was sent.
public struct EditorPage: WebPage {
    public static let template = "editor"

    /// Someone else's change found on saving: theirs against what the form sent.
    public struct Conflict: Sendable {
        public var at: DisplayTime
        public var titleDiff: TextDiff
        public var bodyDiff: TextDiff
        /// Where to start again from theirs.
        public var discard: String
    }

    public var chrome: PageChrome
    public var heading: String
    public var action: String
    /// The revision the form edits (`If-Match`); 0 for a new announcement.
    public var revision: Int
    /// The form's idempotency key: sent twice, it writes once.
    public var key: String
    public var titleValue: String
    public var bodyValue: String
    public var titleError: String?
    public var bodyError: String?
    public var problem: String?
    public var conflict: Conflict?
    public var submit: String
    public var cancel: String
    public var srcdoc: String
    public let frameHead = BodyFrame.head
    /// The longest title the form takes: the server's count (a browser counts UTF-16 units, never
    /// fewer than the server's characters: a title of many emoji the API takes may be too long
    /// for the form).
    public let titleLimit = ValidationRules.maxTitleLength

    /// The empty form for a new announcement.
    public static func new(chrome: PageChrome, key: String) -> EditorPage {
        EditorPage(chrome: chrome, heading: "New announcement", action: "/new", revision: 0, key: key, title: "", body: "", submit: "Post", cancel: "/")
    }

    /// The form for `announcement` as it is.
    public static func edit(chrome: PageChrome, _ announcement: Announcement, key: String) -> EditorPage {
        EditorPage(
            chrome: chrome, heading: "Edit announcement \(announcement.id)", action: "/a/\(announcement.id)/edit",
            revision: announcement.revision, key: key, title: announcement.title, body: announcement.body ?? "", submit: "Save", cancel: "/a/\(announcement.id)"
        )
    }

    public init(chrome: PageChrome, heading: String, action: String, revision: Int, key: String, title: String, body: String, submit: String, cancel: String) {
        self.chrome = chrome
        self.heading = heading
        self.action = action
        self.revision = revision
        self.key = key
        titleValue = title
        bodyValue = body
        self.submit = submit
        self.cancel = cancel
        srcdoc = BodyFrame.document(body)
    }

    /// What the form holds, as an announcement to write (an empty text is none).
    public var draft: AnnouncementDraft {
        AnnouncementDraft(title: titleValue, body: bodyValue.isEmpty ? nil : bodyValue)
    }

    /// The form with `title` and `body` as sent, its preview showing them.
    public mutating func keep(title: String, body: String) {
        titleValue = title
        bodyValue = body
        srcdoc = BodyFrame.document(body)
    }

    /// The form again with what was sent, and each problem by its field (`title`, `body`); any
    /// other under the form's heading.
    public mutating func show(_ problems: [(field: String, message: String)], otherwise message: String) {
        for problem in problems {
            switch problem.field {
            case "title": titleError = "The title " + problem.message
            case "body": bodyError = "The text " + problem.message
            default: self.problem = problem.message
            }
        }
        if problems.isEmpty { problem = message }
    }

    /// The form again after someone else changed the announcement: their version (`current`)
    /// against what was sent, and the form now editing theirs, so that saving again replaces it.
    public mutating func show(conflictWith current: Announcement) {
        conflict = Conflict(
            at: DisplayTime(current.updatedAt),
            titleDiff: TextDiff(from: current.title, to: titleValue),
            bodyDiff: TextDiff(bodies: current.body ?? "", bodyValue),
            discard: "/a/\(current.id)/edit"
        )
        revision = current.revision
        submit = "Save mine over theirs"
    }
}
