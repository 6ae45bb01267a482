/// The log's hash chain, followed one line at a time: whether each line's `prev` is the link of the
/// line before it. `verify` and start-up both follow it, so that they judge a line alike.
///
/// Line 1 has no `prev`. Lines of format 1 (older than erasure) may lack one until the chain
/// starts (a log older than the chain, or imported): they are *unproven*, not broken. From the
/// first line with a `prev`, and on every line of format 2 or later, a line without one, or with
/// one that is not the link of the line before, breaks the chain.
public struct HashChain: Sendable, Hashable {
    /// The link of the last line followed (`LineHash(link:)`): what the next line's `prev` must be.
    public private(set) var last: LineHash?
    /// The first line with a `prev`, once one was followed.
    public private(set) var start: Int?

    /// A chain before line 1.
    public init() {}

    /// A chain that goes on after line `line`, whose link is `last` (the line a snapshot covers
    /// last). The chain counts as started there: every line after a snapshot was appended by a
    /// store, which writes `prev` on every line, so one without it was written by hand.
    public init(after last: LineHash, line: Int) {
        self.last = last
        self.start = line
    }

    /// What a line is to the chain.
    public enum Link: Sendable, Hashable {
        /// Its `prev` is the link of the line before it (or it is line 1, with no `prev`).
        case proven
        /// A line of format 1 without `prev`, before the chain starts: not a problem, not proven.
        case unproven
        /// Its `prev` breaks the chain: why, in words (the line's number goes before them).
        case broken(String)
    }

    /// Follows line `number`, whose `prev` and format are given (nil for a line this version
    /// cannot read: it is checked as a line of a known format), and whose own link is `link`.
    /// With `afterUnknown`, the line before was of a newer format, whose way of linking is
    /// unknown: the line counts as proven.
    public mutating func follow(line number: Int, prev: LineHash?, format: UInt8?, link: LineHash?, afterUnknown: Bool = false) -> Link {
        defer { last = link }
        if prev != nil, start == nil { start = number }
        switch (prev, last) {
        case (nil, nil):
            return .proven
        case (nil, _?):
            if let format, format >= Event.firstErasableFormat {
                return .broken("no `prev` on a line of format \(format): the store writes `prev` on every line after line 1 since before that format, so this line was written or changed by hand (removing `prev` hides a change to the line before it): restore the log from a backup, and check it with --expect-head")
            }
            if let start {
                return .broken("no `prev`, but the hash chain runs from line \(start) and the store writes `prev` on every line after line 1: this line was written or changed by hand (removing `prev` hides a change to the line before it)")
            }
            return .unproven
        case (_?, nil):
            return .broken("line 1 has a `prev`, but no line comes before it (was the start of the log cut off?)")
        case (_?, _?) where afterUnknown:
            return .proven
        case (let prev?, let before?):
            return prev == before ? .proven : .broken("`prev` does not match the SHA-256 of line \(number - 1): a line before this one was changed after it was written")
        }
    }

    /// Passes over a line that is not checked (one that holds no event), whose link the next
    /// line's `prev` must be.
    public mutating func pass(link: LineHash?) {
        last = link
    }
}
