/// Strings kept as `JSONText`: checked, not decoded, when they are in the store's escaping.
extension JSONScanner {
    /// Reads a string value as `JSONText`. A string already in the store's escaping (what the
    /// store writes) is checked (escapes, control characters, UTF-8) in one pass and copied once,
    /// without decoding; any other spelling is decoded and escaped again.
    mutating func text(field: String) throws(LineProblem) -> JSONText {
        guard peek() == UInt8(ascii: "\"") else { throw LineProblem("field `\(field)`: expected a string") }
        let quote = index
        index += 1
        if try scanStoredEscaping(field: field) {
            defer { index += 1 }
            if defersText {
                // An empty text stands in for it: the caller puts it in from `deferredText`.
                deferredText = (quote + 1)..<index
                return JSONText(escaped: [])
            }
            return JSONText(escaped: [UInt8](UnsafeRawBufferPointer(rebasing: bytes[(quote + 1)..<index])))
        }
        index = quote
        return JSONText(try string(field: field))
    }

    /// Advances to the closing quote of a string in the store's escaping (see `JSONText`), checking
    /// its UTF-8; returns false, at some byte inside the string, at the first escape the store
    /// would not write (`\/`, `\u00e9`, an unknown one…), for the caller to decode the string.
    private mutating func scanStoredEscaping(field: String) throws(LineProblem) -> Bool {
        let count = bytes.count
        while true {
            // Skip bytes that need no look, eight at a time: the next quote, backslash, control
            // character or non-ASCII byte is the lowest flagged byte (borrows only flag bytes above it).
            while index + 8 <= count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let special = Self.specialBytes(word)
                if special != 0 {
                    index += special.trailingZeroBitCount &>> 3
                    break
                }
                index += 8
            }
            guard index < count else { throw syntax("unterminated string") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard index + 1 < count else { throw syntax("unterminated string") }
                switch bytes[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"),
                     UInt8(ascii: "b"), UInt8(ascii: "f"):
                    index += 2
                case UInt8(ascii: "u") where isStoredControlEscape(at: index):
                    index += 6
                default:
                    return false
                }
            case 0..<0x20:
                throw syntax("a control character in a string must be escaped")
            case 0x20..<0x80:
                index += 1
            default:
                guard let length = Self.utf8SequenceLength(bytes, at: index) else {
                    throw LineProblem("field `\(field)`: not valid UTF-8", isMalformedJSON: true)
                }
                index += length
            }
        }
    }

    /// The quotes, backslashes, control characters and non-ASCII bytes among the eight in `word`:
    /// the high bit of each such byte is set (and, from a borrow, maybe of bytes after the first).
    @inline(__always)
    private static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let zeroes = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
        let controls = (word &- ones &* 0x20) & ~word
        return (zeroes | controls | word) & highs
    }

    /// Whether a `\u` escape at `start` is `\u00XX` (lowercase) for a control character the store
    /// writes that way (those without a short escape).
    private func isStoredControlEscape(at start: Int) -> Bool {
        guard start + 6 <= bytes.count, bytes[start + 2] == UInt8(ascii: "0"), bytes[start + 3] == UInt8(ascii: "0") else { return false }
        let high = bytes[start + 4], low = bytes[start + 5]
        guard high == UInt8(ascii: "0") || high == UInt8(ascii: "1") else { return false }
        let lowValue: UInt8
        switch low {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): lowValue = low - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): lowValue = low - UInt8(ascii: "a") + 10
        default: return false
        }
        switch (high - UInt8(ascii: "0")) << 4 | lowValue {
        case 0x08, 0x09, 0x0a, 0x0c, 0x0d: return false  // \b \t \n \f \r
        default: return true
        }
    }

    /// The length of the well-formed UTF-8 sequence starting with the non-ASCII byte at `start`
    /// (Unicode's table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF), or nil.
    static func utf8SequenceLength(_ bytes: UnsafeRawBufferPointer, at start: Int) -> Int? {
        let lead = bytes[start]
        let length: Int, second: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF: length = 2; second = 0x80...0xBF
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; second = 0x80...0xBF
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4; second = 0x80...0xBF
        case 0xF4: length = 4; second = 0x80...0x8F
        default: return nil
        }
        guard start + length <= bytes.count, second.contains(bytes[start + 1]) else { return nil }
        for offset in 2..<length where bytes[start + offset] & 0xC0 != 0x80 { return nil }
        return length
    }
}
