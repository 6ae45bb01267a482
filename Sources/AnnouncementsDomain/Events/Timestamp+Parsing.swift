extension Timestamp {
    /// Parses an RFC 3339 date-time: `2026-11-21T09:30:00Z`, `2026-11-21T09:30:00.123Z`,
    /// `2026-11-21T10:30:00.5+01:00`. Fractions beyond milliseconds are truncated. Returns nil when malformed.
    public init?(rfc3339 text: String) {
        var text = text
        guard let value = text.withUTF8({ Self.parse(UnsafeRawBufferPointer($0)) }) else { return nil }
        self = value
    }

    /// Parses RFC 3339 from raw UTF-8 bytes (the log parser's path).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> Timestamp? {
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<count {
                let digit = bytes[index + offset] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            index += count
            return value
        }
        func expect(_ characters: UInt8...) -> Bool {
            guard index < bytes.count, characters.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")),
              let month = number(2), expect(UInt8(ascii: "-")),
              let day = number(2), expect(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")),
              let hour = number(2), expect(UInt8(ascii: ":")),
              let minute = number(2), expect(UInt8(ascii: ":")),
              let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 61
        else { return nil }
        var millis: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                if digits < 3 { millis = millis * 10 + Int64(bytes[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes: Int64 = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = number(2), expect(UInt8(ascii: ":")), let minutes = number(2),
                  hours < 24, minutes < 60
            else { return nil }
            offsetMinutes = sign * (hours * 60 + minutes)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = Timestamp.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offsetMinutes * 60
        let milliseconds = seconds * 1000 + millis
        // An offset can move a time out of the years the log's own form writes (0000 to 9999 in
        // UTC): such a time could be read but not written back.
        guard writable.contains(milliseconds) else { return nil }
        return Timestamp(millisecondsSince1970: milliseconds)
    }

    /// This instant moved by `minutes`, or nil where that leaves the years the log's own form
    /// writes (as a reader's time zone can move a time given as 0000-01-01T00:00).
    public func adding(minutes: Int) -> Timestamp? {
        let (offset, overflowed) = Int64(minutes).multipliedReportingOverflow(by: 60_000)
        let (moved, overflowedToo) = millisecondsSince1970.addingReportingOverflow(offset)
        guard !overflowed, !overflowedToo, Timestamp.writable.contains(moved) else { return nil }
        return Timestamp(millisecondsSince1970: moved)
    }

    /// The instants `description` writes: 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z.
    private static let writable = (days(fromCivil: 0, 1, 1) * 86_400_000)...(days(fromCivil: 10_000, 1, 1) * 86_400_000 - 1)

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
