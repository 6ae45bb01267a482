/// The text a reader sees in an HTML body, without its markup: what v3's `excerpt` shows and what
/// search finds words in.
///
/// Tags and comments are dropped, and so is everything inside `script`, `style`, `template`,
/// `title` and `head` (never text a reader sees); a tag that starts or ends a block (`p`, `br`,
/// `li`, a heading, …) separates words; character references (`&amp;`, `&#233;`, `&#xE9;`, and the
/// named ones bodies use) are decoded; runs of white space become one space. It reads bodies as a
/// browser would only as far as words go: it is no HTML parser, and nothing it returns is ever
/// rendered as HTML.
public enum HTMLText {
    /// The plain text of `html`, its white space collapsed.
    public static func plain(_ html: String) -> String {
        String(decoding: plainUTF8(Array(html.utf8)), as: UTF8.self)
    }

    /// `plain` of HTML given as UTF-8 bytes, as UTF-8 bytes: what search reads words from,
    /// without making a `String`.
    static func plainUTF8(_ html: [UInt8]) -> [UInt8] {
        html.withUnsafeBufferPointer { html in
            var reader = Reader(html)
            reader.read()
            return reader.output
        }
    }

    /// At most `limit` characters of `html`'s plain text, cut at a word's end where it is longer,
    /// with `…` after a cut.
    public static func excerpt(_ html: String, limit: Int = 200) -> String {
        excerpt(utf8: Array(html.utf8), limit: limit)
    }

    /// `excerpt` of a body held as JSON text, decoding only its start where that is enough: a v3
    /// list or search page makes one for each of up to a hundred bodies of up to megabytes.
    static func excerpt(of body: JSONText, limit: Int = 200) -> String {
        let (start, isWhole) = body.utf8(escapedPrefix: excerptPrefix)
        if isWhole { return excerpt(utf8: start, limit: limit) }
        // The start is enough when its reading ended with the text it needed, short of its end by
        // more than any look ahead (a reference's 32 bytes): what comes after could not change it.
        let (text, stoppedAt) = excerptText(start, limit: limit)
        if let stoppedAt, stoppedAt + 64 <= start.count { return cut(text, limit: limit) }
        return excerpt(utf8: body.utf8, limit: limit)
    }

    /// How many escaped bytes of a body `excerpt(of:)` decodes first.
    static let excerptPrefix = 16 * 1024

    /// `excerpt` of HTML given as UTF-8 bytes.
    static func excerpt(utf8 html: [UInt8], limit: Int = 200) -> String {
        cut(excerptText(html, limit: limit).text, limit: limit)
    }

    /// Enough of the plain text of `html` for `limit + 1` characters (a character is at most four
    /// bytes), not the whole body; and where in `html` the reading stopped when it stopped for
    /// having that much (nil when it read to the end).
    private static func excerptText(_ html: [UInt8], limit: Int) -> (text: String, stoppedAt: Int?) {
        html.withUnsafeBufferPointer { html in
            var reader = Reader(html, stoppingAfter: 4 * (limit + 1))
            reader.read()
            return (String(decoding: reader.output, as: UTF8.self), reader.output.count >= reader.limit ? reader.position : nil)
        }
    }

    /// `text`, at most `limit` characters, cut at a word's end with `…` where it is longer.
    private static func cut(_ text: String, limit: Int) -> String {
        guard text.count > limit else { return text }
        let cut = text.prefix(limit)
        // Cut at the end of the last whole word: at `limit` itself when a space follows it.
        if text[cut.endIndex] == " " { return String(cut) + "…" }
        let word = cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut
        return String(word.isEmpty ? cut : word) + "…"
    }

    /// What an element's tag means for the text around it.
    private enum Element {
        /// Its content is not text a reader sees.
        case hidden
        /// It starts a new block: words on either side of it are separate.
        case block
        /// Text flows through it.
        case inline

        /// The elements that are not inline, by the length of their names: a name is compared
        /// with the few of its length, without making an array of it or hashing it (every tag of
        /// every body indexed is looked up here).
        private static let byLength: [[(name: [UInt8], element: Element)]] = {
            let hidden = ["script", "style", "template", "title", "head", "noscript"]
            let block = [
                "p", "br", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th", "table",
                "blockquote", "pre", "hr", "section", "article", "header", "footer", "dd", "dt", "dl", "figcaption",
            ]
            let all = hidden.map { (Array($0.utf8), Element.hidden) } + block.map { (Array($0.utf8), Element.block) }
            var byLength = [[(name: [UInt8], element: Element)]](repeating: [], count: all.map(\.0.count).max().map { $0 + 1 } ?? 0)
            for (name, element) in all { byLength[name.count].append((name, element)) }
            return byLength
        }()

        /// The element named `name`, in any case.
        static func named(_ name: UnsafeBufferPointer<UInt8>) -> Element {
            guard name.count < byLength.count else { return .inline }
            for entry in byLength[name.count] where entry.name.elementsEqual(name.lazy.map { $0 | 0x20 }) { return entry.element }
            return .inline
        }
    }

    /// The named character references bodies use most; any other name is left as written.
    private static let namedReferences: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "shy": "\u{AD}",
        "ldquo": "\u{201C}", "rdquo": "\u{201D}", "lsquo": "\u{2018}", "rsquo": "\u{2019}", "laquo": "«", "raquo": "»",
        "hellip": "…", "mdash": "—", "ndash": "–", "bull": "•", "middot": "·", "copy": "©", "reg": "®", "trade": "™",
        "euro": "€", "pound": "£", "yen": "¥", "cent": "¢", "sect": "§", "deg": "°", "times": "×", "divide": "÷",
        "eacute": "é", "egrave": "è", "ecirc": "ê", "euml": "ë", "aacute": "á", "agrave": "à", "acirc": "â", "auml": "ä",
        "aring": "å", "atilde": "ã", "aelig": "æ", "ccedil": "ç", "iacute": "í", "igrave": "ì", "icirc": "î", "iuml": "ï",
        "ntilde": "ñ", "oacute": "ó", "ograve": "ò", "ocirc": "ô", "ouml": "ö", "otilde": "õ", "oslash": "ø",
        "uacute": "ú", "ugrave": "ù", "ucirc": "û", "uuml": "ü", "yacute": "ý", "yuml": "ÿ", "szlig": "ß",
        "Eacute": "É", "Egrave": "È", "Aacute": "Á", "Agrave": "À", "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "Ccedil": "Ç",
        "Ntilde": "Ñ", "Oslash": "Ø", "Aring": "Å", "AElig": "Æ",
    ]

    /// Reads text out of HTML bytes, over an unsafe buffer (every body passes through here when
    /// the search index is built: a bounds check per byte would be most of the time).
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        var output: [UInt8] = []
        /// Whether a space is owed before the next visible character.
        var pendingSpace = false
        /// The text bytes after which reading stops.
        let limit: Int

        init(_ bytes: UnsafeBufferPointer<UInt8>, stoppingAfter limit: Int = .max) {
            self.bytes = bytes
            self.limit = limit
            output.reserveCapacity(min(bytes.count, limit))
        }

        /// Reads the text into `output`, up to `limit` bytes of it.
        mutating func read() {
            let count = bytes.count
            while position < count, output.count < limit {
                let byte = bytes[position]
                if byte == UInt8(ascii: "<") {
                    readMarkup()
                } else if byte == UInt8(ascii: "&") {
                    readReference()
                } else if isSpace(byte) {
                    pendingSpace = true
                    position += 1
                } else {
                    if pendingSpace, !output.isEmpty { output.append(0x20) }
                    pendingSpace = false
                    // The run of plain text up to the next markup, reference or space, at once.
                    let start = position
                    position += 1
                    while position < count {
                        let next = bytes[position]
                        if next == UInt8(ascii: "<") || next == UInt8(ascii: "&") || isSpace(next) { break }
                        position += 1
                    }
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
                }
            }
        }

        /// Appends text, spaces collapsed (nothing before the first visible character).
        private mutating func put(_ text: String) {
            for byte in text.utf8 {
                if isSpace(byte) {
                    pendingSpace = true
                    continue
                }
                if pendingSpace, !output.isEmpty { output.append(0x20) }
                pendingSpace = false
                output.append(byte)
            }
        }

        /// At `<`: a comment, a declaration, a tag, or a `<` that is text (not followed by a
        /// letter, `/`, `!` or `?`).
        private mutating func readMarkup() {
            let next = position + 1 < bytes.count ? bytes[position + 1] : 0
            if next == UInt8(ascii: "!"), starts(with: "<!--", at: position) {
                position = end(of: "-->", from: position + 4)
            } else if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") {
                position = end(of: ">", from: position + 2)
            } else if next == UInt8(ascii: "/") || isLetter(next) {
                readTag()
            } else {
                put("<")
                position += 1
            }
        }

        /// A start or end tag: its name decides whether it separates words or hides its content;
        /// quoted attribute values may hold `>`.
        private mutating func readTag() {
            var index = position + 1
            let closing = bytes[index] == UInt8(ascii: "/")
            if closing { index += 1 }
            let nameStart = index
            while index < bytes.count, isLetter(bytes[index]) || (bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9")) {
                index += 1
            }
            let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<index])
            var quote: UInt8?
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: ">") {
                    break
                }
            }
            position = index
            switch Element.named(name) {
            case .block: pendingSpace = true
            case .hidden where !closing:
                // Up to its end tag, whatever is between (a script's `<` is not markup).
                position = endTag(name.map { $0 | 0x20 }, from: position)
                pendingSpace = true
            case .hidden, .inline: break
            }
        }

        /// Just past `</name…>` from `start`, or the end of the bytes.
        private func endTag(_ name: [UInt8], from start: Int) -> Int {
            var index = start
            while index + 1 < bytes.count {
                if bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "/") {
                    let nameStart = index + 2
                    if nameStart + name.count <= bytes.count,
                       zip(bytes[nameStart..<(nameStart + name.count)], name).allSatisfy({ $0 | 0x20 == $1 }) {
                        return end(of: ">", from: nameStart + name.count)
                    }
                }
                index += 1
            }
            return bytes.count
        }

        private func starts(with text: StaticString, at index: Int) -> Bool {
            let length = text.utf8CodeUnitCount
            guard index + length <= bytes.count else { return false }
            return text.withUTF8Buffer { UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]).elementsEqual($0) }
        }

        /// Just past the first `terminator` at or after `start`, or the end of the bytes.
        private func end(of terminator: StaticString, from start: Int) -> Int {
            var index = start
            while index < bytes.count {
                if starts(with: terminator, at: index) { return index + terminator.utf8CodeUnitCount }
                index += 1
            }
            return bytes.count
        }

        /// At `&`: a character reference, decoded, or a `&` that is text.
        private mutating func readReference() {
            let start = position + 1
            var index = start
            while index < bytes.count, index - start < 32, bytes[index] != UInt8(ascii: ";"), !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "&") {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ";"), index > start,
               let decoded = Self.decode(String(decoding: bytes[start..<index], as: UTF8.self)) {
                put(decoded)
                position = index + 1
            } else {
                put("&")
                position += 1
            }
        }

        /// A reference's text: `#233`, `#xE9` or a known name; nil for anything else.
        private static func decode(_ name: String) -> String? {
            let (digits, radix) = name.hasPrefix("#x") || name.hasPrefix("#X") ? (name.dropFirst(2), 16) : (name.dropFirst(), 10)
            guard name.hasPrefix("#") else { return HTMLText.namedReferences[name] }
            guard !digits.isEmpty, digits.allSatisfy({ $0.isHexDigit && (radix == 16 || $0.isASCII && $0.isNumber) }) else { return nil }
            // A number past any character (too many digits for 32 bits too) is one that is none.
            return character(UInt32(digits, radix: radix) ?? UInt32.max)
        }

        /// The character a numeric reference names; U+FFFD for one that is no character, or one
        /// no text shows (a control other than tab and line breaks, a noncharacter): plain text
        /// that XML and terminals carry as it is.
        private static func character(_ value: UInt32) -> String {
            guard let scalar = Unicode.Scalar(value), !ForbiddenCharacters.isForbiddenInBody(scalar) else { return "\u{FFFD}" }
            return String(Character(scalar))
        }

        private func isLetter(_ byte: UInt8) -> Bool {
            (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        }

        private func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
        }
    }
}
