/// What Foundation's JSON parser does not tell: whether an object names a field twice (it keeps
/// the last value silently).
public enum JSONFieldNames {
    /// The first field name that the object in `bytes` repeats (at its top level, compared after
    /// decoding escapes, so `"t\u0069tle"` repeats `"title"`); nil when none is repeated or `bytes`
    /// is not a well-formed object.
    ///
    /// Its own walk of the object, so that `JSONScanner.object`, which reads every line of a
    /// replay, stays as it is.
    public static func firstRepeated(in bytes: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(bytes)
        var seen: Set<[UInt8]> = []
        var repeated: [UInt8]?
        do throws(LineProblem) {
            scanner.skipWhitespace()
            guard scanner.peek() == UInt8(ascii: "{") else { return nil }
            scanner.index += 1
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") { return nil }
            while true {
                scanner.skipWhitespace()
                let name = try scanner.stringBytes(field: nil) { Array($0) }
                if repeated == nil, !seen.insert(name).inserted { repeated = name }
                scanner.skipWhitespace()
                guard scanner.peek() == UInt8(ascii: ":") else { return nil }
                scanner.index += 1
                scanner.skipWhitespace()
                try scanner.skipValue(depth: 1)
                scanner.skipWhitespace()
                switch scanner.peek() {
                case UInt8(ascii: ","): scanner.index += 1
                case UInt8(ascii: "}"): return repeated.map { String(decoding: $0, as: UTF8.self) }
                default: return nil
                }
            }
        } catch {
            return nil
        }
    }
}
