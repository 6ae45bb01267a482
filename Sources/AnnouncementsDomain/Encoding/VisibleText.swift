/// Text from the log, a server or a client, made safe to print on a terminal or in a log line.
///
/// A log may have been written by other tools, and old logs by rules that let titles hold
/// anything; printed raw, an ESC could erase a line and a CR or LF forge another row. So every
/// character that can steer a terminal, break a line or reorder what it shows is spelled as an
/// escape, the way JSON spells it: `\n`, `\r` and `\t`, else `\u` and four lowercase hex digits
/// (`\u001b`). Escaped are the C0 controls (U+0000–U+001F), DEL (U+007F), the C1 controls
/// (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and the bidirectional
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). A backslash is doubled
/// (`\\`), so an escape in the output always stands for the character, never for what a writer typed.
public enum VisibleText {
    /// `text` with the characters above escaped. `multiline` keeps line feeds and tabs, for text
    /// shown on lines of its own (a body under `body:`); a CR is escaped even there.
    public static func escaped(_ text: String, multiline: Bool = false) -> String {
        escaped(text, multiline: multiline, quoting: false)
    }

    /// `text` escaped and in double quotes, a `"` in it escaped too: a value that cannot end its
    /// field or its line early (the access log's path).
    public static func quoted(_ text: String) -> String {
        "\"" + escaped(text, multiline: false, quoting: true) + "\""
    }

    private static func escaped(_ text: String, multiline: Bool, quoting: Bool) -> String {
        guard text.utf8.contains(where: { mayStartEscape($0) || (quoting && $0 == UInt8(ascii: "\"")) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += #"\\"#
            case "\"" where quoting: result += #"\""#
            case "\n" where multiline, "\t" where multiline: result.unicodeScalars.append(scalar)
            case "\n": result += #"\n"#
            case "\r": result += #"\r"#
            case "\t": result += #"\t"#
            case _ where needsEscape(scalar):
                let hex = String(scalar.value, radix: 16)
                result += #"\u"# + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is escaped (apart from the backslash and the short escapes).
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether `byte` can start the UTF-8 of a character to escape: a C0 control, a backslash,
    /// DEL, the lead of U+0080–U+009F (0xC2), or of U+2028–U+202E and U+2066–U+2069 (0xE2).
    private static func mayStartEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\\") || byte == 0x7F || byte == 0xC2 || byte == 0xE2
    }
}
