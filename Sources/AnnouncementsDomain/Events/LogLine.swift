/// One line of a log as a reader delivers it, to a fold (replay, `LogVerification`, `HistoryFold`).
public struct LogLine: Sendable {
    /// The 1-based line number.
    public var number: Int
    /// Where the line is in its log: the byte offset of its first byte in a file.
    public var offset: Int64
    /// The line's exact bytes, without its newline.
    public var bytes: ArraySlice<UInt8>
    /// The event the line holds, or why it holds none.
    public var parsed: Result<Event, LineProblem>
    /// The SHA-256 of `bytes`, when the reader was asked to compute hashes.
    public var hash: LineHash?
    /// True for the last newline-terminated line the file had when it was read.
    public var isLast: Bool

    public init(number: Int, offset: Int64, bytes: ArraySlice<UInt8>, parsed: Result<Event, LineProblem>, hash: LineHash? = nil, isLast: Bool) {
        self.number = number
        self.offset = offset
        self.bytes = bytes
        self.parsed = parsed
        self.hash = hash
        self.isLast = isLast
    }

    /// The seq the line names: its event's, or an unknown line's; its line number when it names
    /// none (in a sound log the two are the same). What a head (`SEQ:SHA256`) names.
    public var seq: Int {
        switch parsed {
        case .success(let event): event.seq
        case .failure(let problem): problem.unknown?.seq ?? number
        }
    }

    /// Moves `parsed` out of the line, leaving an empty problem behind: unlike a copy, this does not
    /// retain each of the event's strings.
    public mutating func takeParsed() -> Result<Event, LineProblem> {
        var taken: Result<Event, LineProblem> = .failure(LineProblem(""))
        swap(&taken, &parsed)
        return taken
    }
}
