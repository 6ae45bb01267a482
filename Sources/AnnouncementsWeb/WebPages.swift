import Mustache

/// The web client's pages, rendered from the Mustache templates compiled into this module. Every
/// value goes through the template's HTML escaping (`{{value}}`), which is `HTMLEscaping` in every
/// template (set here, before each one's text); no template writes a value unescaped, and no page
/// is built by hand.
public struct WebPages: Sendable {
    private let library: MustacheLibrary
    /// The templates that did not parse, with why: none, as the tests check (a template is part
    /// of the source, not input).
    public let problems: [String]

    /// The pages, their templates parsed once for the process.
    public static let compiled = WebPages()

    private init() {
        MustacheContentTypes.register(HTMLEscaping(), named: HTMLEscaping.name)
        var library = MustacheLibrary()
        var problems: [String] = []
        for (name, bytes) in Self.templates {
            // Without the file's last line end: a partial used inside a line (`{{>time}}.`) would
            // put it there, and a space showed before what follows ("…PM .").
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            do {
                // On a line of its own (a standalone tag, which renders nothing, not even its line
                // end): the template's own first line is handled as it would be without it.
                try library.register("{{% CONTENT_TYPE: \(HTMLEscaping.name)}}\n" + text, named: name)
            } catch {
                problems.append("\(name).mustache: \(error)")
            }
        }
        self.library = library
        self.problems = problems
    }

    /// `page` as a whole HTML document.
    public func render<Page: WebPage>(_ page: Page) -> String {
        library.render(page, withTemplate: Page.template) ?? "the page's template, \(Page.template).mustache, did not parse: \(problems)"
    }

    private static let templates: [(name: String, bytes: [UInt8])] = [
        ("layout", PackageResources.layout_mustache),
        ("diff", PackageResources.diff_mustache),
        ("time", PackageResources.time_mustache),
        ("board", PackageResources.board_mustache),
        ("announcement", PackageResources.announcement_mustache),
        ("editor", PackageResources.editor_mustache),
        ("confirm", PackageResources.confirm_mustache),
        ("history", PackageResources.history_mustache),
        ("sign-in", PackageResources.sign_in_mustache),
        ("problem", PackageResources.problem_mustache),
    ]
}

/// A page's values: what its template (`template`) shows.
public protocol WebPage: Sendable {
    /// The template's name.
    static var template: String { get }
}
