import AnnouncementsDomain

/// How far a replay goes.
public enum ReplayBound: Sendable, Hashable {
    /// Up to and including the event with this seq.
    case seq(Int)
    /// Up to and including the last event at or before this time.
    case time(Timestamp)

    public func includes(_ event: Event) -> Bool {
        switch self {
        case .seq(let seq): event.seq <= seq
        case .time(let time): event.at <= time
        }
    }
}

/// The bytes after a log's last newline: what a crash mid-write leaves behind. (A line that ends
/// with its newline was written whole: if it is not an event, the log is damaged, not torn.)
public struct TornTail: Sendable, Hashable {
    /// Where the torn bytes start.
    public var offset: Int64
    /// How many bytes there are from `offset` to the end of the file.
    public var count: Int
    /// The 1-based line number the torn bytes start on.
    public var line: Int

    /// Why the bytes are not a line, as messages say it.
    public static let reason = "the last line has no newline"
}

/// What a replay does with the log's hash chain (see `HashChain`).
public enum ChainCheck: Sendable, Hashable {
    /// Not followed: a replay for a reader (`verify` is what checks the chain).
    case off
    /// Every line's `prev` must be the link of the line before: a break stops the replay with an
    /// error naming the line (`LogError.Kind.damaged`). What a server's start-up does.
    case refuse
    /// Followed, and each break kept in `Replay.brokenLinks` rather than refused: an operator's
    /// decision to serve a damaged log as it is.
    case accept
}

/// The state a log folds into, and where the log ends.
public struct Replay: Sendable {
    /// The read models after the last applied event.
    public var model = ReadModel()
    /// The hash of the last applied line: the next line's `prev`.
    public var lastHash: LineHash?
    /// The bytes after the last good line, if the log ends in a torn line.
    public var tornTail: TornTail?
    /// Where each applied event's line is, when the replay was asked to index.
    public var index = EventIndex()
    /// The seq of the event each idempotency key made, when the replay was asked to index.
    public var keys: [String: Int] = [:]
    /// The announcements with a sealed line among those applied: erased (their erased event may
    /// come after a bounded replay's end), whose texts are gone.
    public var sealed: Set<Int> { Set(firstSealedLine.keys) }
    /// Each of those, with the line of its first sealed line.
    private var firstSealedLine: [Int: Int] = [:]
    /// Whether `apply` follows the hash chain, and what a break does.
    public var chainCheck = ChainCheck.off
    /// The chain up to the last applied line, when `chainCheck` is not `.off`.
    public var chain = HashChain()
    /// The breaks of the chain a replay that accepts them let through, each naming its line.
    public var brokenLinks: [LogError] = []
    /// The search index of the snapshot the replay started from, when it stored one.
    var search: LoadedSearchIndex?

    /// The state of an empty log, to fold lines into (see `apply`).
    public init() {
        model.deferTitleIndex()
    }
}

extension Replay {
    /// The state, without the announcements erased since (`sealed`, and `erasedLater`: those whose
    /// erased event came after the replay's end, their lines not sealed yet when an erasure was
    /// interrupted): what a past state shows, as `GET /announcements?asOf=` does (their texts are
    /// gone, so they are left out).
    public func modelWithoutErased(erasedLater: some Sequence<Int> = []) -> ReadModel {
        var model = model
        for id in sealed.union(erasedLater) { model.leaveOut(id: id) }
        return model
    }

    /// Records `hash` as the last applied line's (`lastHash`), and in the index as its link.
    public mutating func end(withLastLineHash hash: LineHash) {
        lastHash = hash
        index.learn(hash, of: model.seq)
    }

    /// Applies the event of line `line` (at `offset` in the log, `count` bytes without its newline,
    /// whose link is `link`), and with `indexing` records where it is and its idempotency key: one
    /// step of every replay, whichever log the lines come from. Throws an error naming the line
    /// when it does not apply, or, as `chainCheck` says, when it breaks the hash chain.
    public mutating func apply(_ event: consuming Event, line: Int, offset: Int64, count: Int, link: LineHash? = nil, indexing: Bool, path: String) throws(LogError) {
        if chainCheck != .off {
            try follow(line: line, prev: event.prev, format: event.format, link: link, path: path)
        }
        let (seq, id, prev, key) = (event.seq, event.id, event.prev, event.key)
        let isSealed = if case .sealed = event.change { true } else { false }
        // Applied first: a line that does not apply (a seq out of order) is refused by the fold's
        // own check, with its message, before the index (which takes seqs only in order) sees it.
        do throws(ApplyProblem) {
            try model.apply(event)
        } catch {
            throw LogError(.invalidLine, path: path, line: line, message: error.message)
        }
        if indexing {
            // A line's `prev` is the link of the line before it: what that line's tag is made of.
            if let prev { index.learn(prev, of: seq - 1) }
            index.add(seq: seq, id: id, offset: offset, length: count, link: nil)
            if let key { keys[key] = seq }
        }
        if isSealed, firstSealedLine[id] == nil { firstSealedLine[id] = line }
    }

    /// Throws at the first sealed line (its texts erased) of an announcement that no applied
    /// erased event erased: a whole log never holds one (an erasure appends its event before it
    /// overwrites anything), and serving it would show an announcement without a title. A bounded
    /// replay may end before the event: only a whole one is checked.
    public func refuseSealedWithoutErasure(path: String) throws(LogError) {
        let unerased = firstSealedLine.filter { model.erased[$0.key] == nil }
        guard let (id, line) = unerased.min(by: { $0.value < $1.value }) else { return }
        throw .sealedWithoutErasure(id: id, line: line, path: path)
    }

    /// Follows line `line` along the chain (see `chainCheck`).
    private mutating func follow(line: Int, prev: LineHash?, format: UInt8, link: LineHash?, path: String) throws(LogError) {
        guard case .broken(let why) = chain.follow(line: line, prev: prev, format: format, link: link) else { return }
        let message = "the hash chain is broken: \(why)"
        guard chainCheck == .accept else {
            throw LogError(.damaged, path: path, line: line, message: message + ". A broken chain is not opened: restore the log from a backup (`announcements verify` lists every break), or, to take it as it is, run the command again with --accept-broken-chain (serve, init and erase take it)")
        }
        brokenLinks.append(LogError(.damaged, path: path, line: line, message: message))
    }
}

extension LogReader {
    /// Rebuilds the state from the log, up to `bound` when given.
    ///
    /// With `indexing`, the result's `index` locates every applied line (for a server); with
    /// `chainCheck`, every line's `prev` is checked against the line before it (see `ChainCheck`).
    /// The result has no title index (`ReadModel.buildTitleIndex()` builds it when it is wanted).
    /// A torn end (bytes after the last newline) is not applied and is returned in `tornTail`; any
    /// bad line throws an error naming it, the last one too (it ends with its newline: it was
    /// written whole).
    public func replay(
        until bound: ReplayBound? = nil,
        indexing: Bool = false,
        chainCheck: ChainCheck = .off,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws(LogError) -> Replay {
        var replay = Replay()
        replay.model.deferTitleIndex()
        replay.chainCheck = chainCheck
        var reader = self
        reader.start = (0, 0)
        return try reader.fold(into: replay, until: bound, indexing: indexing, progress: progress).replay
    }

    /// Rebuilds the state from a snapshot of it and the lines after the one the snapshot covers
    /// last, as `replay(indexing:chainCheck:)` would from the whole log (with the title index kept
    /// as it goes, since the snapshot brings one); the chain is followed from the tagged line.
    /// Nil when, with `chainCheck` off, the first line after the snapshot has a `prev` that is
    /// not the snapshot's line hash: that log is not the one the snapshot was made of (and the
    /// caller replays it whole). With it on, that is a break of the chain like any other.
    func replay(
        continuing snapshot: Snapshot,
        indexing: Bool = true,
        chainCheck: ChainCheck = .off,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws(LogError) -> (replay: Replay, tail: Int)? {
        var reader = self
        reader.start = (snapshot.tag.end, snapshot.tag.seq)
        var replay = snapshot.state
        replay.chainCheck = chainCheck
        replay.chain = HashChain(after: snapshot.tag.hash, line: snapshot.tag.seq)
        if !indexing {
            replay.index = EventIndex()
            replay.keys = [:]
        }
        let expectedPrev = chainCheck == .off ? snapshot.tag.hash : nil
        let (folded, tail, chained) = try reader.fold(into: replay, until: nil, indexing: indexing, progress: progress, chainingFrom: expectedPrev)
        return chained ? (folded, tail) : nil
    }

    /// Folds the lines from `start` into `replay`. Returns the state, how many lines it applied,
    /// and whether the first of them chains to `chainingFrom` (its `prev` is that hash, or absent).
    private func fold(
        into initial: Replay,
        until bound: ReplayBound?,
        indexing: Bool,
        progress: ((_ done: Int64, _ total: Int64) -> Void)?,
        chainingFrom expectedPrev: LineHash? = nil
    ) throws(LogError) -> (replay: Replay, applied: Int, chained: Bool) {
        var replay = initial
        var applied = 0
        var chained = true
        // Where the last applied line is, to hash it once at the end rather than keep its bytes
        // (a replay that follows the chain has every line's hash already).
        var lastLine: (offset: Int64, count: Int)?
        let path = self.path
        var reader = self
        reader.computesHashes = replay.chainCheck != .off
        let summary = try reader.read(progress: progress) { line throws(LogError) in
            let (number, offset, count, link, isLast) = (line.number, line.offset, line.bytes.count, line.hash, line.isLast)
            // The event is moved from the line into the model, never copied (a copy retains each string).
            switch line.takeParsed() {
            case .success(let event):
                if let bound, !bound.includes(event) { return .stop }
                if applied == 0, let expectedPrev, let prev = event.prev, prev != expectedPrev {
                    chained = false
                    return .stop
                }
                try replay.apply(event, line: number, offset: offset, count: count, link: link, indexing: indexing, path: path)
            case .failure(let problem):
                throw LogError(.invalidLine, path: path, line: number, message: problem.message + (isLast && problem.isMalformedJSON ? LineProblem.wholeLastLine : ""))
            }
            lastLine = (offset, count)
            applied += 1
            return .continue
        }
        if let tail = summary.tail {
            replay.tornTail = TornTail(offset: tail.offset, count: tail.bytes.count, line: summary.lines + 1)
        }
        if replay.chainCheck != .off, applied > 0, let last = replay.chain.last {
            replay.end(withLastLineHash: last)
        } else if let lastLine {
            replay.end(withLastLineHash: LineHash(link: try ReadOnlyFile(path: path).bytes(from: lastLine.offset, count: lastLine.count)))
        }
        return (replay, applied, chained)
    }
}
