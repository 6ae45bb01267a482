extension Event {
    /// The public form of a stored line, `{"seq":12,"type":"edited","id":3,"at":"…"}`: what
    /// anyone who may read live announcements learns of an event. It carries no text, no writer
    /// and no key; an app that follows the feed this way re-reads the announcements it names.
    ///
    /// A line laid out as `encodeLine` writes it begins with exactly these fields, so its public
    /// form is that beginning, closed; any other line (a hand-made one) is parsed. nil for a line
    /// that is not an event.
    public static func publicLine(ofStored line: ArraySlice<UInt8>) -> [UInt8]? {
        if let end = publicPrefixEnd(line), isPublicPrefixValid(line[..<end]) {
            return Array(line[..<end]) + [UInt8(ascii: "}")]
        }
        guard let event = try? EventParser.parse(line) else { return nil }
        var encoded = Array(#"{"seq":"#.utf8)
        encoded.appendDecimal(event.seq)
        encoded.append(contentsOf: #","type":""#.utf8)
        encoded.append(contentsOf: event.type.rawValue.utf8)
        encoded.append(contentsOf: #"","id":"#.utf8)
        encoded.appendDecimal(event.id)
        encoded.append(contentsOf: #","at":""#.utf8)
        encoded.append(contentsOf: event.at.description.utf8)
        encoded.append(contentsOf: #""}"#.utf8)
        return encoded
    }

    /// Whether the type and the time in a public prefix are a known type and an RFC 3339 time:
    /// a line changed by hand must not pass anything else on to anyone who reads the feed.
    private static func isPublicPrefixValid(_ prefix: ArraySlice<UInt8>) -> Bool {
        // The prefix ends with `"at":"<time>"`: the time is between its last two quotes.
        let closing = prefix.index(before: prefix.endIndex)
        guard let type = storedType(inLine: prefix), EventType(rawValue: String(decoding: type, as: UTF8.self)) != nil,
              let opening = prefix[..<closing].lastIndex(of: UInt8(ascii: "\"")) else { return false }
        let time = prefix[(opening + 1)..<closing]
        return Array(time).withUnsafeBytes { Timestamp.parse($0) } != nil
    }

    /// Where `{"seq":D,"type":"T","id":D,"at":"A"` ends in a line that goes on with `,"by":`; nil
    /// when the line is laid out otherwise.
    private static func publicPrefixEnd(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8>.Index? {
        var index = line.startIndex
        func expect(_ text: StaticString) -> Bool {
            let bytes = UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            guard line[index...].starts(with: bytes) else { return false }
            index += bytes.count
            return true
        }
        func digits() -> Bool {
            let start = index
            while index < line.endIndex, line[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index > start
        }
        func word() -> Bool {
            // A type or a time: no quote, backslash or control character inside.
            let start = index
            while index < line.endIndex, line[index] != UInt8(ascii: "\""), line[index] != UInt8(ascii: "\\"), line[index] >= 0x20 { index += 1 }
            return index > start
        }
        guard expect(#"{"seq":"#), digits(), expect(#","type":""#), word(), expect(#"","id":"#), digits(),
              expect(#","at":""#), word(), expect("\"") else { return nil }
        let end = index
        return expect(#","by":"#) ? end : nil
    }
}
