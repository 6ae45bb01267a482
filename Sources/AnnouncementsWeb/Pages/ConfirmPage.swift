/// The question before a change that cannot be taken back: deleting an announcement, or erasing
/// its texts (which asks for a reason).
public struct ConfirmPage: WebPage {
    public static let template = "confirm"

    public var chrome: PageChrome
    public var heading: String
    public var message: String
    public var action: String
    public var revision: Int
    /// The form's idempotency key (a delete sent twice deletes once).
    public var key = ""
    public var asksReason: Bool
    public var reasonValue = ""
    public var reasonError: String?
    public var problem: String?
    public var confirm: String
    public var cancel: String

    /// Asks before deleting announcement `id` (at `revision`), titled `title`.
    public static func delete(chrome: PageChrome, id: Int, title: String, revision: Int, key: String) -> ConfirmPage {
        var page = ConfirmPage(
            chrome: chrome, heading: "Delete “\(title)”?",
            message: "Readers will no longer see it. Auditors can still read its history.",
            action: "/a/\(id)/delete", revision: revision, asksReason: false, confirm: "Delete", cancel: "/a/\(id)"
        )
        page.key = key
        return page
    }

    /// Asks before erasing announcement `id`'s texts, with a reason.
    public static func erase(chrome: PageChrome, id: Int, title: String?) -> ConfirmPage {
        let name = title.map { "“\($0)”" } ?? "announcement \(id)"
        return ConfirmPage(
            chrome: chrome, heading: "Erase \(name) for good?",
            message: "Every title and text it ever had is removed from the log, in every past version, and cannot be brought back. Its history keeps who changed it and when, and your reason.",
            action: "/a/\(id)/erase", revision: 0, asksReason: true, confirm: "Erase for good", cancel: "/a/\(id)/history"
        )
    }
}
