/// A point of the log's hash chain: a line's seq and the SHA-256 of its bytes, written `SEQ:SHA256`.
///
/// `verify` prints the log's head and `GET /health` tells a server's; an operator who records it
/// can later prove, with `verify --expect-head`, that the log still holds that line unchanged, and
/// so (through the chain) every sealed line before it: that it was not cut back or rewritten.
public struct LogHead: Sendable, Hashable, CustomStringConvertible {
    /// The line's seq (its line number in a sound log), 1 or more.
    public var seq: Int
    /// The SHA-256 of the line's bytes, without its newline.
    public var hash: LineHash

    public init(seq: Int, hash: LineHash) {
        self.seq = seq
        self.hash = hash
    }

    /// Parses `SEQ:SHA256` (a seq of 1 or more, a colon, 64 hex digits); nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let seq = Int(parts[0]), seq >= 1 else { return nil }
        let digits = Array(parts[1].lowercased().utf8)
        guard let hash = digits.withUnsafeBytes({ LineHash(hex: $0) }) else { return nil }
        self.init(seq: seq, hash: hash)
    }

    /// The form `init?(_:)` reads, and the example an error message shows.
    public static let form = "SEQ:SHA256"

    /// `SEQ:SHA256`, e.g. `6:3f4d1013…` (with all 64 hex digits).
    public var description: String { "\(seq):\(hash)" }
}
