/// The first four bytes of a line's link in the hash chain (`LineHash.tag`): eight hex digits
/// that tell this log's line at a seq from another history's line at the same seq.
///
/// A log restored from an older backup gives the seqs after the backup's end again, to other
/// events; an ETag that named only a seq (an announcement's revision, a list's position) would
/// then match a representation of different content, and a client's cached copy or `If-Match`
/// would pass for current. With the line's tag beside the seq, it does not. `unknown` (zero) is
/// the tag of a line whose link replay could not learn: one followed by a line without `prev` (a
/// hand-made line, or a log from before the hash chain).
public struct LineTag: Sendable, Hashable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// A line whose link is not known.
    public static let unknown = LineTag(rawValue: 0)

    /// Eight lowercase hex digits: the first eight of the line's hash as `verify` prints it.
    public var description: String {
        let digits = String(rawValue, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// Parses eight lowercase hex digits; nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 8,
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
              let value = UInt32(text, radix: 16)
        else { return nil }
        rawValue = value
    }
}
