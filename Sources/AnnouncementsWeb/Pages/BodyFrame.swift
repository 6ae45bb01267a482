/// An announcement's body as a page shows it: the whole document of a frame (`<iframe srcdoc>`)
/// that the page sandboxes without script permission. The body is a poster's HTML; the browser
/// keeps it from running anything or reaching the page (`sandbox`), and the page's
/// Content-Security-Policy, which the frame inherits, keeps it from loading anything from
/// elsewhere. Nothing here filters the HTML: the browser's isolation is the protection.
public enum BodyFrame {
    /// What comes before the body in the frame's document: its character set and its stylesheet.
    /// The page's script puts the same head before a preview's text.
    public static let head = "<!doctype html><html><head><meta charset=\"utf-8\"><link rel=\"stylesheet\" href=\"\(WebAssets.bodyStylesheet.path)\"></head><body>"

    /// The frame's document for `body`.
    public static func document(_ body: String) -> String {
        head + body
    }
}
