/// What Foundation's JSON parser does not tell: whether an object names a field twice (it keeps
/// the last value silently).
public enum JSONFieldNames {
    /// The first field name that the object in `bytes` repeats (at its top level, compared after
    /// decoding escapes, so `"t\u0069tle"` repeats `"title"`); nil when none is repeated or `bytes`
    /// is not a well-formed object.
    public static func firstRepeated(in bytes: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(bytes)
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { return nil }
        var seen: Set<[UInt8]> = []
        var repeated: [UInt8]?
        do throws(LineProblem) {
            try scanner.object(name: { scanner throws(LineProblem) in try scanner.stringBytes(field: nil) { Array($0) } }) { scanner, name throws(LineProblem) in
                if repeated == nil, !seen.insert(name).inserted { repeated = name }
                try scanner.skipValue(depth: 1)
            }
        } catch {
            return nil
        }
        return repeated.map { String(decoding: $0, as: UTF8.self) }
    }
}
