import Mustache

/// The escaping every template's values go through: `<`, `>`, `&`, `"` and `'` as entities,
/// wherever they are, judged by the UTF-8 bytes a browser reads.
///
/// swift-mustache's own HTML escaping compares whole Swift `Character`s (grapheme clusters): a
/// `"` or `>` followed by a combining mark, or a `<` after a prepended letter (U+0D4E, U+0600),
/// is one `Character` that is not the bare one, and went out unescaped; a browser's HTML parser
/// reads code points, and took it for markup. These five are ASCII, so a byte is a code point.
struct HTMLEscaping: MustacheContentType {
    /// The name templates use it by (`{{% CONTENT_TYPE: HTML_UTF8}}`), as `WebPages` registers it.
    static let name = "HTML_UTF8"

    func escapeText(_ text: String) -> String {
        guard text.utf8.contains(where: { Self.entity(for: $0) != nil }) else { return text }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + 16)
        for byte in text.utf8 {
            if let entity = Self.entity(for: byte) { escaped.append(contentsOf: entity.utf8) } else { escaped.append(byte) }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    private static func entity(for byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "\""): "&quot;"
        case UInt8(ascii: "'"): "&#39;"
        default: nil
        }
    }
}
