import AnnouncementsDomain

/// One announcement at `/a/{id}`: its title, when it was posted and changed, and its body in a
/// sandboxed frame (`BodyFrame`).
public struct AnnouncementPage: WebPage {
    public static let template = "announcement"

    public var chrome: PageChrome
    public var id: Int
    public var title: String
    public var createdAt: DisplayTime
    public var updatedAt: DisplayTime
    public var edited: Bool
    public var hasBody: Bool
    /// The frame's whole document (escaped by the template into the attribute).
    public var srcdoc: String
    /// Whether the signed-in role may edit and delete it (an author: only its own).
    public var canChange: Bool
    public var canErase: Bool
    /// The log's seq the page shows: where its live updates start.
    public var seq: Int

    public init(chrome: PageChrome, announcement: Announcement, seq: Int) {
        self.chrome = chrome
        id = announcement.id
        title = announcement.title
        createdAt = DisplayTime(announcement.createdAt)
        updatedAt = DisplayTime(announcement.updatedAt)
        edited = announcement.updatedAt != announcement.createdAt
        let body = announcement.body ?? ""
        hasBody = !body.isEmpty
        srcdoc = BodyFrame.document(body)
        canChange = chrome.mayChange(createdBy: announcement.createdBy)
        canErase = chrome.mayErase
        self.seq = seq
    }
}
