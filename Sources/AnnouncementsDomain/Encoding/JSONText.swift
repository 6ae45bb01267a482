/// Text held as the bytes of its JSON string literal, without the quotes, in the one escaping the
/// store writes (quotes, backslashes and control characters escaped, everything else as UTF-8).
///
/// Bodies are kept this way: a replay copies them from the log once, checked but not decoded, and
/// the JSON API sends them as they are. Because the escaping is the only one, two texts are equal
/// exactly when their bytes are, so equality and hashing never decode. Decode with `string`.
public struct JSONText: Sendable, Hashable {
    /// The escaped bytes, without the surrounding quotes.
    public let escaped: [UInt8]

    /// Escapes `text`.
    public init(_ text: String) {
        var escaped: [UInt8] = []
        escaped.appendJSONEscaped(text)
        self.escaped = escaped
    }

    /// Bytes already in the store's escaping (checked by the caller).
    package init(escaped: [UInt8]) {
        self.escaped = escaped
    }

    /// The text, decoded (by the scanner that reads the log's strings).
    public var string: String {
        guard escaped.contains(UInt8(ascii: "\\")) else { return String(decoding: escaped, as: UTF8.self) }
        let literal = [UInt8(ascii: "\"")] + escaped + [UInt8(ascii: "\"")]
        return literal.withUnsafeBytes { bytes in
            var scanner = JSONScanner(bytes)
            // The bytes are a checked string in the store's escaping, which always decodes; were
            // that ever broken, the text is shown as it is stored rather than lost.
            let decoded = try? scanner.stringBytes(field: nil) { String(decoding: $0, as: UTF8.self) }
            return decoded ?? String(decoding: escaped, as: UTF8.self)
        }
    }

    /// The text, decoded, as UTF-8 bytes: `string`'s bytes, without making a `String` (search reads
    /// every body this way). The store's escaping writes `\uXXXX` only for control characters,
    /// each one byte; anything else falls back to `string`.
    package var utf8: [UInt8] {
        utf8(escapedPrefix: escaped.count).bytes
    }

    /// The decoded UTF-8 of the first `count` escaped bytes (an escape that would cross them left
    /// out: it is decoded whole or not at all), and whether that is the whole text.
    package func utf8(escapedPrefix count: Int) -> (bytes: [UInt8], isWhole: Bool) {
        let end = min(max(0, count), escaped.count)
        let isWhole = end == escaped.count
        guard escaped[..<end].contains(UInt8(ascii: "\\")) else { return (isWhole ? escaped : Array(escaped[..<end]), isWhole) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(end)
        var index = 0
        while index < end {
            let byte = escaped[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < escaped.count else {
                bytes.append(byte)
                index += 1
                continue
            }
            let length = escaped[index + 1] == UInt8(ascii: "u") ? 6 : 2
            guard index + length <= end || isWhole else { return (bytes, false) }
            switch escaped[index + 1] {
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "u"):
                guard index + 6 <= escaped.count,
                      let value = UInt8(String(decoding: escaped[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16), value < 0x80
                else { return (Array(string.utf8), true) }
                bytes.append(value)
                index += 6
                continue
            case let other: bytes.append(other)
            }
            index += 2
        }
        return (bytes, isWhole)
    }

    /// The decoded text's length in UTF-8 bytes, counted without decoding.
    public var utf8Count: Int {
        var count = escaped.count, index = 0
        while index < escaped.count {
            if escaped[index] == UInt8(ascii: "\\"), index + 1 < escaped.count {
                // `\X` is one byte, `\u00XX` is one byte.
                let length = escaped[index + 1] == UInt8(ascii: "u") ? 6 : 2
                count -= length - 1
                index += length
            } else {
                index += 1
            }
        }
        return count
    }
}

// MARK: - The store's escaping

extension [UInt8] {
    /// Appends `text` as a JSON string literal, with its quotes (see `appendJSONEscaped`).
    mutating func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        appendJSONEscaped(text)
        append(UInt8(ascii: "\""))
    }

    /// Appends `text` as a JSON string literal, with its quotes.
    mutating func appendJSONString(_ text: JSONText) {
        append(UInt8(ascii: "\""))
        append(contentsOf: text.escaped)
        append(UInt8(ascii: "\""))
    }

    /// Appends `text` escaped as in a JSON string literal, without the quotes: quotes, backslashes
    /// and control characters escaped, everything else as UTF-8. Text with nothing to escape is
    /// checked eight bytes at a time.
    mutating func appendJSONEscaped(_ text: String) {
        var text = text
        text.withUTF8 { appendJSONEscaped(bytes: $0) }
    }

    private mutating func appendJSONEscaped(bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var runStart = 0, index = 0
        while index < count {
            while index + 8 <= count, !Self.needsEscaping(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
            }
            let end = Swift.min(index + 8, count)
            while index < end, !Self.needsEscaping(bytes[index]) { index += 1 }
            guard index < end else { continue }
            append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            appendEscaped(bytes[index])
            index += 1
            runStart = index
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
    }

    private static func needsEscaping(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any of the eight bytes in `word` is a control character, a quote or a backslash.
    private static func needsEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let belowSpace = (word &- ones &* 0x20) & ~word & highs != 0
        return belowSpace || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): append(contentsOf: #"\""#.utf8)
        case UInt8(ascii: "\\"): append(contentsOf: #"\\"#.utf8)
        case UInt8(ascii: "\n"): append(contentsOf: #"\n"#.utf8)
        case UInt8(ascii: "\r"): append(contentsOf: #"\r"#.utf8)
        case UInt8(ascii: "\t"): append(contentsOf: #"\t"#.utf8)
        case 0x08: append(contentsOf: #"\b"#.utf8)
        case 0x0c: append(contentsOf: #"\f"#.utf8)
        default:
            append(contentsOf: #"\u00"#.utf8)
            append(Self.hexDigits[Int(byte >> 4)])
            append(Self.hexDigits[Int(byte & 0x0f)])
        }
    }

    /// Lowercase hex digits, as `\u00XX` escapes are written.
    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
