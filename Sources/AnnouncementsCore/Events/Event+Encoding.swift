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

extension [UInt8] {
    /// Appends a non-negative or negative integer in decimal.
    mutating func appendDecimal(_ value: Int) {
        append(contentsOf: String(value).utf8)
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters escaped,
    /// everything else as UTF-8.
    mutating func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): append(contentsOf: #"\n"#.utf8)
                case UInt8(ascii: "\r"): append(contentsOf: #"\r"#.utf8)
                case UInt8(ascii: "\t"): append(contentsOf: #"\t"#.utf8)
                case 0x08: append(contentsOf: #"\b"#.utf8)
                case 0x0c: append(contentsOf: #"\f"#.utf8)
                default: append(contentsOf: #"\u00"#.utf8); append(hex[Int(byte >> 4)]); append(hex[Int(byte & 0x0f)])
                }
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        append(UInt8(ascii: "\""))
    }
}
