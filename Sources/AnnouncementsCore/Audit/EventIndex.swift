/// Where each event's line is in the log, and which events touched each announcement: what lets
/// a server answer history, point-in-time and feed requests without scanning the log.
///
/// About 8 bytes per event plus one small array per announcement. It covers durable lines only.
public struct EventIndex: Sendable {
    /// The offset of each line, by seq - 1.
    private var starts: [Int64] = []
    /// The offset just past the last indexed line's newline.
    private var end: Int64 = 0
    /// The seqs of each announcement's events, by id - 1 (ids are dense from 1).
    private var seqsByID: [[Int]] = []

    public init() {}

    /// The seq of the last indexed event.
    public var lastSeq: Int { starts.count }

    /// Records the event with `seq` (the next one), about announcement `id`, whose line of `length`
    /// bytes (without its newline) starts at `offset`. Replay and the committer add events in
    /// order, after the fold accepted them; anything else is a bug in this module.
    mutating func add(seq: Int, id: Int, offset: Int64, length: Int) {
        guard seq == starts.count + 1, id >= 1 else {
            assertionFailure("event \(seq) (id \(id)) added to an index that ends at \(starts.count)")
            return
        }
        starts.append(offset)
        end = offset + Int64(length) + 1
        if seqsByID.count < id { seqsByID.append(contentsOf: repeatElement([], count: id - seqsByID.count)) }
        seqsByID[id - 1].append(seq)
    }

    /// The bytes that hold the lines of the events in `seqs` (each line with its newline).
    func span(_ seqs: ClosedRange<Int>) -> (offset: Int64, count: Int)? {
        guard seqs.lowerBound >= 1, seqs.upperBound <= starts.count else { return nil }
        let spanEnd = seqs.upperBound < starts.count ? starts[seqs.upperBound] : end
        return (starts[seqs.lowerBound - 1], Int(spanEnd - starts[seqs.lowerBound - 1]))
    }

    /// The seqs of announcement `id`'s events, oldest first; nil when it was never created.
    func seqs(of id: Int) -> [Int]? {
        guard id >= 1, id <= seqsByID.count, !seqsByID[id - 1].isEmpty else { return nil }
        return seqsByID[id - 1]
    }
}
