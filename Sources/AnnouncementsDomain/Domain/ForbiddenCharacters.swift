/// The control characters no title holds and no body holds but tab, line feed and carriage
/// return: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F). Each can steer a terminal
/// (ESC starts a sequence, CR returns to the line's start, U+009B is a one-character CSI).
///
/// Writes are checked on every request and `verify` checks every line, so the check is one pass
/// over the UTF-8 (or, for a body, the escaped) bytes, eight at a time where there is nothing to
/// look at; the place of what it finds is worked out only then, on the decoded text.
enum ControlCharacters {
    /// Whether `scalar` is a control character.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `scalar` is a control character a body may not hold (all but tab, LF and CR).
    static func isForbiddenInBody(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) && scalar != "\t" && scalar != "\n" && scalar != "\r"
    }

    /// The first control character in `title`, or nil.
    static func first(inTitle title: String) -> CharacterPlace? {
        var title = title
        let found = title.withUTF8 { scan($0, escaped: false) }
        return found ? CharacterPlace.first(in: title, where: isControl) : nil
    }

    /// The first control character other than tab, LF and CR in `body`, or nil. Its bytes are in
    /// the store's escaping, where these three are `\t`, `\n` and `\r`, and every other C0
    /// character `\b`, `\f` or `\u00XX`.
    static func first(inBody body: JSONText) -> CharacterPlace? {
        let found = body.escaped.withUnsafeBufferPointer { scan($0, escaped: true) }
        return found ? CharacterPlace.first(in: body.string, where: isForbiddenInBody) : nil
    }

    /// Whether `bytes` hold a control character: a C0 byte, DEL, or C1 (`C2 80` to `C2 9F`); in
    /// `escaped` bytes also an escape for a C0 character other than `\t`, `\n` and `\r`.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var index = 0
        while index < count {
            while index + 8 <= count, !mayHold(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
            }
            let end = min(index + 8, count)
            while index < end {
                switch bytes[index] {
                case 0..<0x20, 0x7F:
                    return true
                case 0xC2 where index + 1 < count && bytes[index + 1] < 0xA0:
                    return true
                case UInt8(ascii: "\\") where escaped && index + 1 < count:
                    switch bytes[index + 1] {
                    case UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "u"): return true
                    default: index += 1  // the escaped character is not a backslash to look at
                    }
                default:
                    break
                }
                index += 1
            }
        }
        return false
    }

    /// Whether any of the eight bytes in `word` may need a look: below 0x20, DEL, 0xC2 or a
    /// backslash (borrows can flag more, never fewer).
    @inline(__always)
    private static func mayHold(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value }
        let below = (word &- ones &* 0x20) & ~word
        let equal = zeroBytes(word ^ (ones &* 0x7F)) | zeroBytes(word ^ (ones &* 0xC2)) | zeroBytes(word ^ (ones &* 0x5C))
        return (below | equal) & highs != 0
    }
}
