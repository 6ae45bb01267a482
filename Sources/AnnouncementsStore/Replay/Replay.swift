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

/// The end of a log that is not a whole line: what a crash mid-write leaves behind.
public struct TornTail: Sendable, Hashable {
    /// Where the torn bytes start.
    public var offset: Int64
    /// How many bytes there are from `offset` to the end of the file.
    public var count: Int
    /// The 1-based line number the torn bytes start on.
    public var line: Int
    /// Why they are not a line: no newline, or not JSON.
    public var reason: String
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
    public var sealed: Set<Int> = []

    /// The state of an empty log, to fold lines into (see `apply`).
    public init() {
        model.deferTitleIndex()
    }
}

extension Replay {
    /// The state, without the announcements erased since (`sealed`): what a past state shows,
    /// as `GET /announcements?asOf=` does (their texts are gone, so they are left out).
    public var modelWithoutErased: ReadModel {
        var model = model
        for id in sealed { model.leaveOut(id: id) }
        return model
    }

    /// Records `hash` as the last applied line's (`lastHash`), and in the index as its link.
    public mutating func end(withLastLineHash hash: LineHash) {
        lastHash = hash
        index.learn(hash, of: model.seq)
    }

    /// Applies the event of line `line` (at `offset` in the log, `count` bytes without its newline),
    /// and with `indexing` records where it is and its idempotency key: one step of every replay,
    /// whichever log the lines come from. Throws an error naming the line when it does not apply.
    public mutating func apply(_ event: consuming Event, line: Int, offset: Int64, count: Int, indexing: Bool, path: String) throws(LogError) {
        if indexing {
            // A line's `prev` is the link of the line before it: what that line's tag is made of.
            if let prev = event.prev { index.learn(prev, of: event.seq - 1) }
            index.add(seq: event.seq, id: event.id, offset: offset, length: count, link: nil)
            if let key = event.key { keys[key] = event.seq }
        }
        if case .sealed = event.change { sealed.insert(event.id) }
        do throws(ApplyProblem) {
            try model.apply(event)
        } catch {
            throw LogError(.invalidLine, path: path, line: line, message: error.message)
        }
    }
}

extension LogReader {
    /// Rebuilds the state from the log, up to `bound` when given.
    ///
    /// With `indexing`, the result's `index` locates every applied line (for a server).
    /// The result has no title index (`ReadModel.buildTitleIndex()` builds it when it is wanted).
    /// A torn end (bytes with no newline, or a last line that is not JSON) is not applied and is
    /// returned in `tornTail`; any other bad line throws an error naming its line.
    public func replay(
        until bound: ReplayBound? = nil,
        indexing: Bool = false,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws(LogError) -> Replay {
        var replay = Replay()
        replay.model.deferTitleIndex()
        var reader = self
        reader.start = (0, 0)
        return try reader.fold(into: replay, until: bound, indexing: indexing, progress: progress).replay
    }

    /// Rebuilds the state from a snapshot of it and the lines after the one the snapshot covers
    /// last, as `replay(indexing:)` would from the whole log (with the title index kept as it goes,
    /// since the snapshot brings one). Nil when the first line after the snapshot has a `prev` that
    /// is not the snapshot's line hash: that log is not the one the snapshot was made of (and the
    /// caller replays it whole).
    func replay(
        continuing snapshot: Snapshot,
        indexing: Bool = true,
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil
    ) throws(LogError) -> (replay: Replay, tail: Int)? {
        var reader = self
        reader.start = (snapshot.tag.end, snapshot.tag.seq)
        var replay = snapshot.state
        if !indexing {
            replay.index = EventIndex()
            replay.keys = [:]
        }
        let (folded, tail, chained) = try reader.fold(into: replay, until: nil, indexing: indexing, progress: progress, chainingFrom: snapshot.tag.hash)
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
        // Where the last applied line is, to hash it once at the end rather than keep its bytes.
        var lastLine: (offset: Int64, count: Int)?
        var torn: (offset: Int64, line: Int, reason: String)?
        let path = self.path
        let summary = try read(progress: progress) { line throws(LogError) in
            let (number, offset, count, isLast) = (line.number, line.offset, line.bytes.count, line.isLast)
            // The event is moved from the line into the model, never copied (a copy retains each string).
            switch line.takeParsed() {
            case .success(let event):
                if let bound, !bound.includes(event) { return .stop }
                if applied == 0, let expectedPrev, let prev = event.prev, prev != expectedPrev {
                    chained = false
                    return .stop
                }
                try replay.apply(event, line: number, offset: offset, count: count, indexing: indexing, path: path)
            case .failure(let problem):
                if isLast, problem.isMalformedJSON {
                    torn = (offset, number, "the last line is not JSON (\(problem.message))")
                    return .stop
                }
                throw LogError(.invalidLine, path: path, line: number, message: problem.message)
            }
            lastLine = (offset, count)
            applied += 1
            return .continue
        }
        if torn == nil, let tail = summary.tail {
            torn = (tail.offset, summary.lines + 1, "the last line has no newline")
        }
        replay.tornTail = torn.map { TornTail(offset: $0.offset, count: Int(summary.size - $0.offset), line: $0.line, reason: $0.reason) }
        if let lastLine {
            replay.end(withLastLineHash: LineHash(link: try ReadOnlyFile(path: path).bytes(from: lastLine.offset, count: lastLine.count)))
        }
        return (replay, applied, chained)
    }
}
