/// A cursor over the UTF-8 bytes of one JSON text, with the primitives `EventParser` is built from.
package struct JSONScanner {
    package let bytes: UnsafeRawBufferPointer
    var index = 0
    /// Whether `text(field:)` leaves a string in the store's escaping where it is, recording its
    /// place in `deferredText` and returning an empty text, rather than copying it.
    let defersText: Bool
    package var deferredText: Range<Int>?

    package init(_ bytes: UnsafeRawBufferPointer, defersText: Bool = false) {
        self.bytes = bytes
        self.defersText = defersText
    }

    var isAtEnd: Bool { index >= bytes.count }

    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): index += 1
            default: return
            }
        }
    }

    /// A syntax error at the current place (`TextPlace`): its column, and its line too in a text
    /// of several lines (a request body; a log's line has one, whose number the reader of the log
    /// gives).
    func syntax(_ what: String) -> LineProblem {
        let place = TextPlace(ofByte: index, in: bytes)
        let named = place.line == 1 ? "column \(place.column)" : "line \(place.line), column \(place.column)"
        return LineProblem("invalid JSON at \(named): \(what)", isMalformedJSON: true)
    }

    // MARK: - Objects and keys

    /// The field names the event schema knows; everything else is `.other`.
    enum Key {
        case seq, type, id, at, by, key, idempotencyKey, data, prev, title, body, salt, v, sealed, reason, other
    }

    /// Reads an object whose `{` is the current byte, calling `field` with the scanner positioned
    /// on each value; `field` must consume the value.
    mutating func object(_ field: (inout JSONScanner, Key) throws(LineProblem) -> Void) throws(LineProblem) {
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            let name = try key()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw syntax("expected ':' after a field name") }
            index += 1
            skipWhitespace()
            try field(&self, name)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return
            default: throw syntax("expected ',' or '}' after a value")
            }
        }
    }

    private mutating func key() throws(LineProblem) -> Key {
        guard peek() == UInt8(ascii: "\"") else { throw syntax("expected a field name in double quotes") }
        return try stringBytes(field: nil) { name in
            @inline(__always) func byte(_ index: Int) -> UInt8 { name[index] }
            switch name.count {
            case 1:
                return byte(0) == UInt8(ascii: "v") ? .v : .other
            case 2:
                switch (byte(0), byte(1)) {
                case (UInt8(ascii: "i"), UInt8(ascii: "d")): return .id
                case (UInt8(ascii: "a"), UInt8(ascii: "t")): return .at
                case (UInt8(ascii: "b"), UInt8(ascii: "y")): return .by
                default: return .other
                }
            case 3:
                switch (byte(0), byte(1), byte(2)) {
                case (UInt8(ascii: "s"), UInt8(ascii: "e"), UInt8(ascii: "q")): return .seq
                case (UInt8(ascii: "k"), UInt8(ascii: "e"), UInt8(ascii: "y")): return .key
                default: return .other
                }
            case 4:
                // Four ASCII bytes as one little-endian word.
                switch name.loadUnaligned(as: UInt32.self) {
                case Self.typeWord: return .type
                case Self.dataWord: return .data
                case Self.prevWord: return .prev
                case Self.bodyWord: return .body
                case Self.saltWord: return .salt
                default: return .other
                }
            case 5:
                return name.loadUnaligned(as: UInt32.self) == Self.titlWord && byte(4) == UInt8(ascii: "e") ? .title : .other
            case 6:
                if name.elementsEqual("sealed".utf8) { return .sealed }
                return name.elementsEqual("reason".utf8) ? .reason : .other
            case 15:
                return name.elementsEqual("idempotency_key".utf8) ? .idempotencyKey : .other
            default:
                return .other
            }
        }
    }

    private static let typeWord = word("type"), dataWord = word("data"), prevWord = word("prev")
    private static let bodyWord = word("body"), titlWord = word("titl"), saltWord = word("salt")

    /// The first four bytes of `text` as a little-endian word.
    private static func word(_ text: StaticString) -> UInt32 {
        text.withUTF8Buffer { UInt32(littleEndian: UnsafeRawBufferPointer($0).loadUnaligned(as: UInt32.self)) }
    }

    // MARK: - Strings

    /// Reads a string value as a `String`; `field` names it in errors.
    mutating func string(field: String) throws(LineProblem) -> String {
        try stringBytes(field: field) { bytes throws(LineProblem) in
            guard let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) else {
                throw LineProblem("field `\(field)`: not valid UTF-8", isMalformedJSON: true)
            }
            return text
        }
    }

    /// Reads a string value and hands its unescaped UTF-8 bytes to `body`: the line's own bytes when
    /// the string has no escapes (the common case), a decoded copy otherwise.
    mutating func stringBytes<T>(
        field: String?,
        _ body: (UnsafeRawBufferPointer) throws(LineProblem) -> T
    ) throws(LineProblem) -> T {
        guard peek() == UInt8(ascii: "\"") else {
            if let field { throw LineProblem("field `\(field)`: expected a string") }
            throw syntax("expected a string")
        }
        index += 1
        let start = index
        scanPlainRun()
        guard index < bytes.count else { throw syntax("unterminated string") }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return try body(UnsafeRawBufferPointer(rebasing: bytes[start..<(index - 1)]))
        }
        var decoded = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        try decodeEscapedRest(into: &decoded)
        return try decoded.withBytes(body)
    }

    /// Advances to the next `"`, `\` or control character, eight bytes at a time where it can.
    private mutating func scanPlainRun() {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            if special & highs != 0 { break }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return }
            index += 1
        }
    }

    /// Decodes the rest of a string from the current byte (a `\` or a control character) to its
    /// closing quote, appending the unescaped bytes.
    private mutating func decodeEscapedRest(into decoded: inout [UInt8]) throws(LineProblem) {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "n"): decoded.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "t"): decoded.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "r"): decoded.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0c)
                case UInt8(ascii: "u"): try unicodeEscape(into: &decoded)
                default:
                    index -= 1
                    throw syntax("unknown escape '\\\(Character(Unicode.Scalar(escape)))'")
                }
            default:
                if byte < 0x20 { throw syntax("a control character in a string must be escaped") }
                let start = index
                scanPlainRun()
                decoded.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            }
        }
        throw syntax("unterminated string")
    }

    /// Decodes `XXXX` after `\u`, with a following `\uXXXX` low surrogate when it is a high one.
    private mutating func unicodeEscape(into decoded: inout [UInt8]) throws(LineProblem) {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw syntax("a \\u escape of a high surrogate must be followed by a low surrogate")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw syntax("expected a low surrogate after a high surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw syntax("a lone low surrogate cannot be decoded")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw syntax("invalid \\u escape") }
        decoded.append(contentsOf: UTF8.encode(unicode).map(Array.init) ?? [])
    }

    private mutating func hex4() throws(LineProblem) -> UInt32 {
        guard index + 4 <= bytes.count else { throw syntax("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw syntax("a \\u escape needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: - Numbers and literals

    /// Reads a JSON integer that must be at least 1.
    mutating func positiveInteger(field: String) throws(LineProblem) -> Int {
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
            guard index - start < 18 else { throw LineProblem("field `\(field)`: the number is too large") }
            value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            index += 1
        }
        let isWhole = index > start && !(bytes[start] == UInt8(ascii: "0") && index - start > 1)
        let next = peek()
        guard isWhole, next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E") else {
            throw LineProblem("field `\(field)`: expected a positive whole number")
        }
        guard value >= 1 else { throw LineProblem("field `\(field)`: expected a positive whole number, not 0") }
        return value
    }

    /// Consumes `null` when it is the next value.
    mutating func null() -> Bool {
        literal("null")
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { UnsafeRawBufferPointer($0).elementsEqual(bytes[index..<(index + count)]) }
        if matches { index += count }
        return matches
    }

    /// Skips any JSON value, checking that it is well formed.
    mutating func skipValue(depth: Int) throws(LineProblem) {
        guard depth < 64 else { throw syntax("values nested too deeply") }
        switch peek() {
        case UInt8(ascii: "\""):
            try stringBytes(field: nil) { _ in }
        case UInt8(ascii: "{"):
            try object { scanner, _ throws(LineProblem) in try scanner.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            index += 1
            skipWhitespace()
            if peek() == UInt8(ascii: "]") { index += 1; return }
            while true {
                skipWhitespace()
                try skipValue(depth: depth + 1)
                skipWhitespace()
                switch peek() {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return
                default: throw syntax("expected ',' or ']' in an array")
                }
            }
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            guard literal("true") || literal("false") || literal("null") else { throw syntax("expected a value") }
        default:
            try skipNumber()
        }
    }

    private mutating func skipNumber() throws(LineProblem) {
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index - start
        }
        if peek() == UInt8(ascii: "-") { index += 1 }
        let start = index
        let count = digits()
        guard count > 0 else { throw syntax("expected a value") }
        guard !(bytes[start] == UInt8(ascii: "0") && count > 1) else { throw syntax("a number cannot start with 0") }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw syntax("expected digits after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw syntax("expected digits in the exponent") }
        }
    }
}
