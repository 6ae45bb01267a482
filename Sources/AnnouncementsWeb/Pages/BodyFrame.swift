/// An announcement's body as a page shows it: the whole document of a frame (`<iframe srcdoc>`)
/// that the page sandboxes without script permission. The body is a poster's HTML; the browser
/// keeps it from running anything or reaching the page (`sandbox`), and the page's
/// Content-Security-Policy, which the frame inherits, keeps it from loading anything from
/// elsewhere. Nothing here filters the HTML: the browser's isolation is the protection. Its links
/// open in the whole window (`<base target="_top">`; the announcement page's sandbox lets a click,
/// and only a click, navigate it, or open a link that asks for a new window): inside the frame
/// they could open nothing, since no page may be framed and the policy frames nothing from
/// elsewhere. (The editor's preview keeps them inert: a click there would leave the form.)
public enum BodyFrame {
    /// What comes before the body in the frame's document: its character set, where its links
    /// open, and its stylesheet. The page's script puts the same head before a preview's text.
    public static let head = "<!doctype html><html><head><meta charset=\"utf-8\"><base target=\"_top\"><link rel=\"stylesheet\" href=\"\(WebAssets.bodyStylesheet.path)\"></head><body>"

    /// The frame's document for `body`.
    public static func document(_ body: String) -> String {
        head + body
    }
}
