import AnnouncementsDomain

/// Where each event's line is in the log, and which events touched each announcement: what lets
/// a server answer history, point-in-time and feed requests without scanning the log.
///
/// Two words and a half per event and one per announcement, in flat arrays: an announcement's
/// events are a chain from its last one back, so adding an event never allocates per announcement.
public struct EventIndex: Sendable {
    /// The offset of each line, by seq - 1.
    private(set) var starts: [Int64] = []
    /// The offset just past the last indexed line's newline.
    private(set) var end: Int64 = 0
    /// The seq of the previous event about the same announcement, by seq - 1 (0 for none).
    private(set) var previousOfSameID: [Int] = []
    /// The seq of each announcement's last event, by id - 1 (ids are dense from 1; 0 for none).
    private(set) var lastSeqByID: [Int] = []
    /// Each line's tag (`LineTag`, the first bytes of its link), by seq - 1; 0 while not known.
    private(set) var lineTags: [UInt32] = []

    public init() {}

    /// An index made of its parts, as a snapshot stores them (the snapshot's reader checks them).
    init(starts: [Int64], end: Int64, previousOfSameID: [Int], lastSeqByID: [Int], lineTags: [UInt32]) {
        self.starts = starts
        self.end = end
        self.previousOfSameID = previousOfSameID
        self.lastSeqByID = lastSeqByID
        self.lineTags = lineTags
    }

    /// The seq of the last indexed event.
    public var lastSeq: Int { starts.count }

    /// Records the event with `seq` (the next one), about announcement `id`, whose line of `length`
    /// bytes (without its newline) starts at `offset` and links into the chain as `link` (nil when
    /// not known yet: replay learns it from the next line's `prev`, see `learn(_:of:)`). Replay and
    /// the committer add events in order, after the fold accepted them; anything else is a bug in
    /// this module.
    mutating func add(seq: Int, id: Int, offset: Int64, length: Int, link: LineHash?) {
        guard seq == starts.count + 1, id >= 1 else {
            assertionFailure("event \(seq) (id \(id)) added to an index that ends at \(starts.count)")
            return
        }
        starts.append(offset)
        end = offset + Int64(length) + 1
        if lastSeqByID.count < id { lastSeqByID.append(contentsOf: repeatElement(0, count: id - lastSeqByID.count)) }
        previousOfSameID.append(lastSeqByID[id - 1])
        lastSeqByID[id - 1] = seq
        lineTags.append(link?.tag.rawValue ?? 0)
    }

    /// Records `link` as the link of line `seq`, already indexed: what the next line's `prev`
    /// says it is, or the hash of the last line, which replay computes at the end.
    mutating func learn(_ link: LineHash, of seq: Int) {
        guard seq >= 1, seq <= lineTags.count else { return }
        lineTags[seq - 1] = link.tag.rawValue
    }

    /// The tag of line `seq`'s link: `unknown` when it is not known, or `seq` is not indexed.
    func lineTag(of seq: Int) -> LineTag {
        guard seq >= 1, seq <= lineTags.count else { return .unknown }
        return LineTag(rawValue: lineTags[seq - 1])
    }

    /// The bytes that hold the lines of the events in `seqs` (each line with its newline).
    func span(_ seqs: ClosedRange<Int>) -> (offset: Int64, count: Int)? {
        guard seqs.lowerBound >= 1, seqs.upperBound <= starts.count else { return nil }
        let spanEnd = seqs.upperBound < starts.count ? starts[seqs.upperBound] : end
        return (starts[seqs.lowerBound - 1], Int(spanEnd - starts[seqs.lowerBound - 1]))
    }

    /// The bytes of the lines after `after`: at most `count` lines, and as many of those (at least
    /// one, however long) as `bytes` holds. Nil when there is no line after `after`.
    func span(after: Int, count: Int, atMostBytes bytes: Int) -> (offset: Int64, count: Int)? {
        guard after >= 0, after < lastSeq, count > 0 else { return nil }
        let count = min(count, lastSeq - after)
        // Where the first `n` lines end; the largest `n` whose lines fit (1 when none does).
        func endOfFirst(_ n: Int) -> Int64 { after + n < starts.count ? starts[after + n] : self.end }
        let offset = starts[after]
        var (fits, over) = (1, count + 1)
        while over - fits > 1 {
            let middle = (fits + over) / 2
            if endOfFirst(middle) - offset <= Int64(bytes) { fits = middle } else { over = middle }
        }
        return (offset, Int(endOfFirst(fits) - offset))
    }

    /// The seq of announcement `id`'s last event; nil when it was never created.
    func lastSeq(of id: Int) -> Int? {
        guard id >= 1, id <= lastSeqByID.count, lastSeqByID[id - 1] > 0 else { return nil }
        return lastSeqByID[id - 1]
    }

    /// The seq of the event before `seq` of the same announcement; nil for its first event (or a
    /// seq not in the index).
    func previousSeq(ofSameIDAs seq: Int) -> Int? {
        guard seq >= 1, seq <= previousOfSameID.count, previousOfSameID[seq - 1] > 0 else { return nil }
        return previousOfSameID[seq - 1]
    }

    /// The seqs of announcement `id`'s events, oldest first; nil when it was never created.
    func seqs(of id: Int) -> [Int]? {
        guard var seq = lastSeq(of: id) else { return nil }
        var seqs: [Int] = []
        while seq > 0 {
            seqs.append(seq)
            seq = previousOfSameID[seq - 1]
        }
        return seqs.reversed()
    }
}
