/// A UTC instant with millisecond precision, written in the log as RFC 3339 (`2026-11-21T09:30:00.000Z`).
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    /// RFC 3339 in UTC with exactly three fraction digits, the form the log stores. An instant
    /// outside the years 0000 to 9999 (which no parsed time is, but arithmetic on one can be)
    /// gets ISO 8601's expanded year, with its sign (`-0001`, `+10000`), rather than a wrong text.
    public var description: String {
        let ms = millisecondsSince1970
        let remainder = ms % 86_400_000
        let days = ms / 86_400_000 - (remainder < 0 ? 1 : 0)
        let msOfDay = remainder < 0 ? remainder + 86_400_000 : remainder
        let (year, month, day) = Self.civil(fromDays: days)
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        func put(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        if (0...9999).contains(year) {
            put(year, digits: 4)
        } else {
            bytes.append(UInt8(ascii: year < 0 ? "-" : "+"))
            let digits = String(year.magnitude).utf8
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, 4 - digits.count)))
            bytes.append(contentsOf: digits)
        }
        bytes.append(UInt8(ascii: "-"))
        put(month, digits: 2); bytes.append(UInt8(ascii: "-"))
        put(day, digits: 2); bytes.append(UInt8(ascii: "T"))
        put(msOfDay / 3_600_000, digits: 2); bytes.append(UInt8(ascii: ":"))
        put(msOfDay / 60_000 % 60, digits: 2); bytes.append(UInt8(ascii: ":"))
        put(msOfDay / 1000 % 60, digits: 2); bytes.append(UInt8(ascii: "."))
        put(msOfDay % 1000, digits: 3); bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Calendar arithmetic (Howard Hinnant's days-from-civil algorithms)

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
