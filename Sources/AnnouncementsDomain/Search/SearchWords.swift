/// The words search knows a text by: runs of letters and digits, each folded so that case and
/// diacritics do not count (`Café` and `CAFE` are both `cafe`). Everything else separates words.
/// A word is kept to the letters that fit in its first `maxBytes` bytes; the rest is dropped.
///
/// Folding is Unicode's lowercase mapping after taking off a letter's diacritics
/// (`DiacriticFolding`) and dropping combining marks and invisible format characters (a soft
/// hyphen inside a word does not split it); a final sigma is a sigma, a sharp s is `ss`. Scripts written without spaces (Chinese,
/// Japanese) make one word of a run, found by its start (the last word of a query is a prefix).
///
/// It reads UTF-8 bytes: ASCII, nearly all of most texts, takes a table lookup per byte; only
/// other characters are decoded and looked up in Unicode's properties.
public enum SearchWords {
    /// The longest word kept, in UTF-8 bytes; the rest of a longer word is dropped.
    public static let maxBytes = 48

    /// The folded words of `text`, in order, repeats included.
    public static func words(_ text: String) -> [String] {
        var words: [String] = []
        forEachWord(inUTF8: Array(text.utf8)) { words.append(String(decoding: $0, as: UTF8.self)) }
        return words
    }

    /// Calls `body` with the folded UTF-8 bytes of each word of `text` (valid UTF-8), in order;
    /// the buffer is valid only during the call.
    static func forEachWord(inUTF8 text: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var word = [UInt8](repeating: 0, count: maxBytes)
        var length = 0
        // Whether a letter did not fit: the rest of the word is dropped, letters that would fit
        // after it included.
        var full = false
        word.withUnsafeMutableBufferPointer { word in
            func flush() {
                full = false
                guard length > 0 else { return }
                body(UnsafeBufferPointer(rebasing: word[..<length]))
                length = 0
            }
            func append(_ byte: UInt8) {
                guard !full, length < maxBytes else {
                    full = true
                    return
                }
                word[length] = byte
                length += 1
            }
            text.withUnsafeBufferPointer { text in
              asciiFold.withUnsafeBufferPointer { asciiFold in
                var index = 0
                while index < text.count {
                    let byte = text[index]
                    if byte < 0x80 {
                        let folded = asciiFold[Int(byte)]
                        if folded == 0 { flush() } else { append(folded) }
                        index += 1
                        continue
                    }
                    let (value, width) = decode(text, at: index)
                    index += width
                    guard let scalar = Unicode.Scalar(value) else {
                        flush()
                        continue
                    }
                    let properties = scalar.properties
                    if properties.generalCategory.isMark { continue }  // a combining mark: part of the word, dropped
                    // An invisible format character (a soft hyphen, a zero-width joiner, a word
                    // joiner, a byte order mark) is part of the word and dropped too; a zero-width
                    // space is where a word ends, in scripts written without spaces.
                    if properties.generalCategory == .format, value != 0x200B { continue }
                    guard properties.isAlphabetic || properties.numericType != nil else {
                        flush()
                        continue
                    }
                    let base = DiacriticFolding.base(of: value).flatMap(Unicode.Scalar.init) ?? scalar
                    for lowered in base.properties.lowercaseMapping.unicodeScalars where !lowered.properties.generalCategory.isMark {
                        // Greek's final sigma (ς) is the sigma (σ) that ends a word: ΟΔΟΣ and οδος
                        // are one word. German's sharp s (ß, ẞ) is `ss`, as Unicode's case folding
                        // has it (Straße and STRASSE are one word, cut after one s as a typed ss is).
                        if lowered == "\u{DF}" {
                            append(UInt8(ascii: "s"))
                            append(UInt8(ascii: "s"))
                            continue
                        }
                        let folded = lowered == "\u{3C2}" ? "\u{3C3}" : lowered
                        let utf8 = folded.utf8
                        guard length + utf8.count <= maxBytes else {
                            full = true
                            break
                        }
                        for byte in utf8 { append(byte) }
                    }
                }
                flush()
              }
            }
        }
    }

    /// Each ASCII byte folded: a lowercase letter or a digit, 0 for a separator.
    private static let asciiFold: [UInt8] = (0..<128).map { byte in
        switch byte {
        case 0x30...0x39, 0x61...0x7A: UInt8(byte)
        case 0x41...0x5A: UInt8(byte) | 0x20
        default: 0
        }
    }

    /// The scalar value of the UTF-8 sequence at `index` (its lead byte is not ASCII) and its length.
    private static func decode(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> (UInt32, Int) {
        let lead = UInt32(text[index])
        let width = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        guard width > 1, index + width <= text.count else { return (0xFFFD, 1) }
        var value = lead & (0xFF >> UInt32(width + 1))
        for offset in 1..<width { value = value << 6 | UInt32(text[index + offset] & 0x3F) }
        return (value, width)
    }
}

extension Unicode.GeneralCategory {
    /// A combining mark (nonspacing, spacing or enclosing).
    var isMark: Bool {
        switch self {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }
}
