/// The characters no title holds, and no body holds but tab, line feed and carriage return:
///
/// - control characters: C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F). Each can steer
///   a terminal (ESC starts a sequence, CR returns to the line's start, U+009B is a one-character CSI);
/// - noncharacters: U+FDD0–U+FDEF and the last two code points of every plane (U+FFFE, U+FFFF,
///   U+1FFFE …). XML cannot carry U+FFFE and U+FFFF at all (one of them in a title made every XML
///   answer listing it a 406), and Unicode keeps the rest for a program's own use, never for text
///   that is exchanged.
///
/// Writes are checked on every request and `verify` checks every line, so the check is one pass
/// over the UTF-8 (or, for a body, the escaped) bytes, eight at a time where there is nothing to
/// look at; the place of what it finds is worked out only then, on the decoded text.
enum ForbiddenCharacters {
    /// Whether `scalar` is a control character.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Whether `scalar` is a noncharacter.
    static func isNoncharacter(_ scalar: Unicode.Scalar) -> Bool {
        (0xFDD0...0xFDEF).contains(scalar.value) || scalar.value & 0xFFFE == 0xFFFE
    }

    /// Whether a title may not hold `scalar`.
    static func isForbiddenInTitle(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) || isNoncharacter(scalar)
    }

    /// Whether a body may not hold `scalar` (a control character but tab, LF and CR, or a noncharacter).
    static func isForbiddenInBody(_ scalar: Unicode.Scalar) -> Bool {
        (isControl(scalar) && scalar != "\t" && scalar != "\n" && scalar != "\r") || isNoncharacter(scalar)
    }

    /// The first character a title may not hold, or nil.
    static func first(inTitle title: String) -> CharacterPlace? {
        var title = title
        let found = title.withUTF8 { scan($0, escaped: false) }
        return found ? CharacterPlace.first(in: title, where: isForbiddenInTitle) : nil
    }

    /// The first character a body may not hold, or nil. Its bytes are in the store's escaping,
    /// where tab, LF and CR are `\t`, `\n` and `\r`, and every other C0 character `\b`, `\f` or
    /// `\u00XX`.
    static func first(inBody body: JSONText) -> CharacterPlace? {
        let found = body.escaped.withUnsafeBufferPointer { scan($0, escaped: true) }
        return found ? CharacterPlace.first(in: body.string, where: isForbiddenInBody) : nil
    }

    /// What a message says `place` is: `control characters` or `noncharacters`, with the rule's
    /// wording for a body (which may hold tab, line feed and carriage return).
    static func message(for place: CharacterPlace, inBody: Bool) -> String {
        if isNoncharacter(place.scalar) {
            return "must not contain noncharacters (\(place)): Unicode keeps them out of text, and XML cannot carry U+FFFE or U+FFFF"
        }
        return inBody
            ? "must not contain control characters other than tab, line feed and carriage return (\(place))"
            : "must not contain control characters (\(place))"
    }

    /// Whether `bytes` may hold a forbidden character: a C0 byte, DEL, C1 (`C2 80` to `C2 9F`), a
    /// noncharacter's UTF-8 (`EF B7 90` to `EF B7 AF`, `EF BF BE`, `EF BF BF`, and a four-byte
    /// sequence ending in `BF BE` or `BF BF` whose second byte ends in F); in `escaped` bytes also
    /// an escape for a C0 character other than `\t`, `\n` and `\r`.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var index = 0
        /// The byte `offset` places after `index`, or 0 past the end.
        func byte(_ offset: Int) -> UInt8 { index + offset < count ? bytes[index + offset] : 0 }
        while index < count {
            while index + 8 <= count, !mayHold(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
            }
            let end = min(index + 8, count)
            while index < end {
                switch bytes[index] {
                case 0..<0x20, 0x7F:
                    return true
                case 0xC2 where byte(1) < 0xA0:
                    return true
                case 0xEF where (byte(1) == 0xB7 && (0x90...0xAF).contains(byte(2))) || (byte(1) == 0xBF && byte(2) >= 0xBE):
                    return true
                case 0xF0...0xF4 where byte(1) & 0x0F == 0x0F && byte(2) == 0xBF && byte(3) >= 0xBE:
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

    /// Whether any of the eight bytes in `word` may need a look: below 0x20, DEL, 0xC2, a
    /// backslash, or 0xEF and above (borrows can flag more, never fewer).
    @inline(__always)
    private static func mayHold(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value }
        let below = (word &- ones &* 0x20) & ~word
        let equal = zeroBytes(word ^ (ones &* 0x7F)) | zeroBytes(word ^ (ones &* 0xC2)) | zeroBytes(word ^ (ones &* 0x5C))
        // A byte with its high bit set whose low seven bits are 0x6F or more: 0xEF to 0xFF.
        let top = ((word & ~highs) &+ ones &* 0x11) & word
        return (below | equal | top) & highs != 0
    }
}
