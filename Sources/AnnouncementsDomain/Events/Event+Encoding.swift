extension Event {
    /// The event as one log line, without its newline, in the field order the store writes:
    /// `{"seq":1,"type":"created","id":1,"at":"…","by":"…","idempotency_key":"…","data":{…},"salt":"…","v":3,"prev":"…"}`
    /// (`idempotency_key` only when the writer sent one, named `key` up to format 2; `salt` and `v`
    /// from format 2; `"sealed":"…"` in place of
    /// `data` and `salt` once the data is erased). `LineHash(link:)` relies on this layout.
    public func encodedLine(salt: Salt? = nil) -> [UInt8] {
        var line = [UInt8]()
        encodeLine(into: &line, salt: salt)
        return line
    }

    /// Appends the event's line, without its newline, to `line`; `salt` goes with the data of a
    /// event of format 2 or later (the store draws a fresh one for each).
    public func encodeLine(into line: inout [UInt8], salt: Salt? = nil) {
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
            line.append(contentsOf: format >= Self.firstIdempotencyKeyFormat ? #","idempotency_key":"#.utf8 : #","key":"#.utf8)
            line.appendJSONString(key)
        }
        switch change {
        case .created(let draft):
            line.append(contentsOf: #","data":{"title":"#.utf8)
            line.appendJSONString(draft.title)
            if let body = draft.bodyText {
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
                if let text = body.text { line.appendJSONString(text) } else { line.append(contentsOf: "null".utf8) }
            }
            line.append(UInt8(ascii: "}"))
        case .deleted:
            break
        case .erased(let reason):
            line.append(contentsOf: #","data":{"reason":"#.utf8)
            line.appendJSONString(reason)
            line.append(UInt8(ascii: "}"))
        case .sealed(_, let digest):
            line.append(contentsOf: #","sealed":""#.utf8)
            digest.appendHex(to: &line)
            line.append(UInt8(ascii: "\""))
        }
        if let salt, isErasable, hasData {
            line.append(contentsOf: #","salt":""#.utf8)
            salt.value.appendHex(to: &line)
            line.append(UInt8(ascii: "\""))
        }
        if isErasable {
            line.append(contentsOf: #","v":"#.utf8)
            line.appendDecimal(Int(format))
        }
        if let prev {
            line.append(contentsOf: #","prev":""#.utf8)
            prev.appendHex(to: &line)
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

    /// The `id` of a stored line as the store writes it (`{"seq":N,"type":"…","id":N,`), read
    /// without parsing the line; nil for a line laid out otherwise.
    public static func storedID(inLine line: ArraySlice<UInt8>) -> Int? {
        let marker = #"","id":"#.utf8
        guard let type = storedType(inLine: line), line[type.endIndex...].starts(with: marker) else { return nil }
        var index = type.endIndex + marker.count
        var id = 0, digits = 0
        while index < line.endIndex, line[index] &- UInt8(ascii: "0") < 10, digits < 18 {
            id = id * 10 + Int(line[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        guard digits > 0, index < line.endIndex, line[index] == UInt8(ascii: ",") else { return nil }
        return id
    }
}

extension [UInt8] {
    /// Appends a non-negative or negative integer in decimal.
    mutating func appendDecimal(_ value: Int) {
        guard value >= 0 else {
            append(contentsOf: String(value).utf8)
            return
        }
        // Digits written backwards into a small buffer, then appended in order: no String.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value, count = 0
            repeat {
                digits[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0
            append(contentsOf: UnsafeBufferPointer(rebasing: digits[(20 - count)...]))
        }
    }
}
