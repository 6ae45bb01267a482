extension Event {
    /// The event as one log line, without its newline, in the field order the store writes:
    /// `{"seq":1,"type":"created","id":1,"at":"…","by":"…","key":"…","data":{…},"prev":"…"}`
    /// (`key` only when the writer sent one).
    public func encodedLine() -> [UInt8] {
        var line = [UInt8]()
        encodeLine(into: &line)
        return line
    }

    /// Appends the event's line, without its newline, to `line`.
    public func encodeLine(into line: inout [UInt8]) {
        line.append(contentsOf: #"{"seq":"#.utf8)
        line.appendDecimal(seq)
        line.append(contentsOf: #","type":""#.utf8)
        line.append(contentsOf: type.rawValue.utf8)
        line.append(contentsOf: #"","id":"#.utf8)
        line.appendDecimal(id)
        line.append(contentsOf: #","at":""#.utf8)
        line.append(contentsOf: at.description.utf8)
        line.append(contentsOf: #"","by":"#.utf8)
        line.appendJSONString(by)
        if let key {
            line.append(contentsOf: #","key":"#.utf8)
            line.appendJSONString(key)
        }
        switch change {
        case .created(let draft):
            line.append(contentsOf: #","data":{"title":"#.utf8)
            line.appendJSONString(draft.title)
            if let body = draft.body {
                line.append(contentsOf: #","body":"#.utf8)
                line.appendJSONString(body)
            }
            line.append(UInt8(ascii: "}"))
        case .edited(let patch):
            line.append(contentsOf: #","data":{"#.utf8)
            if let title = patch.title {
                line.append(contentsOf: #""title":"#.utf8)
                line.appendJSONString(title)
            }
            if let body = patch.body {
                if patch.title != nil { line.append(UInt8(ascii: ",")) }
                line.append(contentsOf: #""body":"#.utf8)
                if let text = body.value { line.appendJSONString(text) } else { line.append(contentsOf: "null".utf8) }
            }
            line.append(UInt8(ascii: "}"))
        case .deleted:
            break
        }
        if let prev {
            line.append(contentsOf: #","prev":""#.utf8)
            line.append(contentsOf: prev.description.utf8)
            line.append(UInt8(ascii: "\""))
        }
        line.append(UInt8(ascii: "}"))
    }
}

extension Event {
    /// The type's bytes in a line laid out as `encodeLine` writes it, right after the seq
    /// (`{"seq":12,"type":"edited",…`), found without parsing the line; nil for a line laid out
    /// otherwise (a hand-made one), which must then be parsed.
    public static func storedType(inLine line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let opening = #"{"seq":"#.utf8, marker = #","type":""#.utf8
        guard line.starts(with: opening) else { return nil }
        var index = line.index(line.startIndex, offsetBy: opening.count)
        while index < line.endIndex, line[index] &- UInt8(ascii: "0") < 10 { index += 1 }
        guard line[index...].starts(with: marker) else { return nil }
        let start = index + marker.count
        guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return line[start..<end]
    }
}

extension [UInt8] {
    /// Appends a non-negative or negative integer in decimal.
    mutating func appendDecimal(_ value: Int) {
        append(contentsOf: String(value).utf8)
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped,
    /// everything else as UTF-8. Text with nothing to escape is checked eight bytes at a time.
    mutating func appendJSONString(_ text: String) {
        var text = text
        text.withUTF8 { appendJSONString(bytes: $0) }
    }

    private mutating func appendJSONString(bytes: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        defer { append(UInt8(ascii: "\"")) }
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
            let hex = "0123456789abcdef".utf8
            append(contentsOf: #"\u00"#.utf8)
            append(hex[hex.index(hex.startIndex, offsetBy: Int(byte >> 4))])
            append(hex[hex.index(hex.startIndex, offsetBy: Int(byte & 0x0f))])
        }
    }
}
