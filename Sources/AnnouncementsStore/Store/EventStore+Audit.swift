import AnnouncementsDomain

/// Reading the log back through the store: the feed, an announcement's history, and an
/// announcement as it was. Only durable lines are read (the index covers nothing else), from the
/// log (for the file: `pread` on a read-only descriptor), so these never wait for a write or a sync.
extension EventStore {
    /// The most lines `events(after:limit:)` returns at once.
    public static let maxFeedPage = 1000

    /// The most bytes of lines one read of the feed takes (at least one line, however long): a
    /// page of long lines (a large body edited many times) is cut short, and read on from there.
    public static let maxFeedPageBytes = 8 << 20

    /// The seq of the last durable event (0 for an empty log), from the index: `eventLines` and
    /// followers read up to it, so a feed position beyond it has nothing to resume from.
    public var lastSeq: Int {
        index.withLock { $0.lastSeq }
    }

    /// The stored lines (exact bytes, without newlines) of the events after `seq`, oldest first:
    /// at most `limit` of them, and fewer when they would pass `maxFeedPageBytes`.
    public func eventLines(after seq: Int, limit: Int) async throws(StoreError) -> [ArraySlice<UInt8>] {
        try await reading { () throws(StoreError) in try self.readEventLines(after: seq, limit: limit) }
    }

    /// `eventLines(after:limit:)` on the calling thread (the feed's worker reads this way).
    func readEventLines(after seq: Int, limit: Int) throws(StoreError) -> [ArraySlice<UInt8>] {
        // Any Int may come in: no arithmetic on `seq` or `limit` before they are bounded.
        let span = index.withLock { $0.span(after: max(seq, 0), count: min(max(limit, 0), Self.maxFeedPage), atMostBytes: Self.maxFeedPageBytes) }
        guard let span else { return [] }
        let waiting = erasuresWaitingForSeals()
        let bytes = try read(span)
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(bytes[start..<end])
            start = end + 1
        }
        return try sealedView(of: lines, waiting: waiting)
    }

    /// The seq of announcement `id`'s last event and its line's tag (from the index, no I/O); nil
    /// when it was never created.
    public func lastEvent(of id: Int) -> (seq: Int, tag: LineTag)? {
        index.withLock { index in index.lastSeq(of: id).map { ($0, index.lineTag(of: $0)) } }
    }

    /// The tag of line `seq` (see `LineTag`), from the index: what tells it from the line another
    /// history (a log restored from an older backup) has at that seq. `unknown` beyond the log.
    public func lineTag(of seq: Int) -> LineTag {
        index.withLock { $0.lineTag(of: seq) }
    }

    /// Announcement `id`'s events, deleted ones included, oldest first, as stored (without
    /// parsing them). Nil when no announcement `id` was ever created.
    public func historyLines(id: Int) async throws(StoreError) -> [ArraySlice<UInt8>]? {
        try await reading { () throws(StoreError) in
            guard let spans = self.historySpans(id: id) else { return nil }
            let waiting = self.erasuresWaitingForSeals()
            return try self.sealedView(of: spans.map { span throws(StoreError) in try self.line(at: span) }, waiting: waiting)
        }
    }

    /// `historyLines(id:)` with the event each line holds.
    public func history(id: Int) async throws(StoreError) -> [(line: ArraySlice<UInt8>, event: Event)]? {
        try await reading { () throws(StoreError) in try self.readHistory(id: id) }
    }

    /// Sealed where an erasure waits for its overwrite, as `historyLines(id:)`.
    private func readHistory(id: Int) throws(StoreError) -> [(line: ArraySlice<UInt8>, event: Event)]? {
        guard let spans = historySpans(id: id) else { return nil }
        let waiting = erasuresWaitingForSeals()
        let lines = try sealedView(of: spans.map { span throws(StoreError) in try line(at: span) }, waiting: waiting)
        return try zip(spans, lines).map { span, line throws(StoreError) in (line, try parse(line, at: span.offset)) }
    }

    private func historySpans(id: Int) -> [(offset: Int64, count: Int)]? {
        index.withLock { index in index.seqs(of: id)?.compactMap { index.span($0...$0) } }
    }

    /// The line in `span` (which ends with its newline), without the newline.
    private func line(at span: (offset: Int64, count: Int)) throws(StoreError) -> ArraySlice<UInt8> {
        let bytes = try read(span)
        return bytes[..<(bytes.endIndex - 1)]
    }

    /// Announcement `id` as it was at `point` (counting the events at exactly that seq or time),
    /// or nil when it did not exist then. Throws `notFound` when it was never created.
    public func announcement(id: Int, asOf point: LogPoint) async throws(StoreError) -> Announcement? {
        try await reading { () throws(StoreError) in try self.readAnnouncement(id: id, asOf: point) }
    }

    private func readAnnouncement(id: Int, asOf point: LogPoint) throws(StoreError) -> Announcement? {
        guard let history = try readHistory(id: id) else { throw .notFound(id: id) }
        // An erased announcement has no past states left to read, whatever the point.
        if let erasure = history.last(where: { $0.event.type == .erased }) { throw .erased(id: id, seq: erasure.event.seq) }
        var announcement: Announcement?
        for (_, event) in history where point.isAtOrAfter(event) {
            switch event.change {
            case .created(let draft): announcement = Announcement(id: id, created: draft, revision: event.seq, by: event.by, at: event.at)
            case .edited(let patch): announcement?.apply(patch, revision: event.seq, at: event.at)
            case .deleted, .erased, .sealed: announcement = nil
            }
        }
        return announcement
    }

    /// Every announcement as it was at `point` (counting the events at exactly that seq or time),
    /// folded from the log's durable lines up to it, and the number of erasures the answer
    /// accounts for (its ETag names the count): an announcement erased since is left out (its texts are gone), and so is one
    /// whose lines the fold found sealed (its erasure is in the log, if not yet in this node's
    /// state). Folds run one at a time on a queue of their own, never on Swift's cooperative pool:
    /// a past state of a large log costs what replaying that far costs (it is not kept: it could be
    /// as large as the live state).
    public func model(asOf point: LogPoint) async throws(StoreError) -> (model: ReadModel, erasures: Int) {
        let lastSeq = self.lastSeq
        // The present, or past it: the live state, without a fold (erased announcements are gone from it).
        if case .seq(let seq) = point, seq >= lastSeq {
            let live = snapshot
            return (live, live.erased.count)
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(ReadModel, Int), StoreError>, Never>) in
            pastStates.async {
                continuation.resume(returning: Result { () throws(StoreError) in
                    var (model, sealed) = try self.readModel(until: point, lastSeq: lastSeq)
                    // Read after the fold: an erasure appends its event before it seals the lines,
                    // so one whose lines the fold may have read unsealed is in this set.
                    // The count is of every announcement left out, so that the answer's tag changes
                    // when a fold finds lines another node sealed before this one took its erasure in.
                    let gone = sealed.union(self.snapshot.erased.keys)
                    for id in gone { model.leaveOut(id: id) }
                    model.buildTitleIndex()
                    return (model, gone.count)
                })
            }
        }
        return try result.get()
    }

    /// The fold of `model(asOf:)`, without a title index (built once at the end), and the ids
    /// whose lines it found sealed.
    private func readModel(until point: LogPoint, lastSeq: Int) throws(StoreError) -> (ReadModel, Set<Int>) {
        var model = ReadModel()
        model.deferTitleIndex()
        var sealed = Set<Int>()
        let end = if case .seq(let seq) = point { min(max(seq, 0), lastSeq) } else { lastSeq }
        // Times never go back from one line to the next in a log the store wrote (`verify` reports
        // one that does): the first event after a time point ends it.
        while model.seq < end {
            let lines = try readEventLines(after: model.seq, limit: min(end - model.seq, Self.maxFeedPage))
            guard !lines.isEmpty else { break }
            for line in lines {
                let number = model.seq + 1
                let event: Event
                do throws(LineProblem) { event = try EventParser.parse(line) } catch { throw changedUnderServer(.invalidLine, line: number, error.message) }
                guard point.isAtOrAfter(event) else { return (model, sealed) }
                if case .sealed = event.change { sealed.insert(event.id) }
                do throws(ApplyProblem) { try model.apply(event) } catch { throw changedUnderServer(.invalidLine, line: number, error.message) }
            }
        }
        return (model, sealed)
    }

    /// Runs `body`, which reads from the log: here when reads are quick (a file), else on a thread
    /// of `readers`, so that a read waiting on the network never holds one of the cooperative
    /// pool's few threads.
    private func reading<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        guard log.readsWait else { return try body() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StoreError>, Never>) in
            readers.async { continuation.resume(returning: Result { () throws(StoreError) in try body() }) }
        }
        return try result.get()
    }

    /// The durable event with `seq`, read back from the log.
    func storedEvent(seq: Int) throws(StoreError) -> Event {
        guard let span = index.withLock({ $0.span(seq...seq) }) else {
            throw changedUnderServer(.unreadable, "event \(seq) is not in the log's index")
        }
        return try parse(try line(at: span), at: span.offset)
    }

    func parse(_ line: ArraySlice<UInt8>, at offset: Int64) throws(StoreError) -> Event {
        do throws(LineProblem) {
            return try EventParser.parse(line)
        } catch {
            throw changedUnderServer(.invalidLine, "the line at byte \(offset) no longer reads as an event (\(error.message))")
        }
    }

    /// A line read back that is not what the index or the state says it is: the file was changed
    /// under the server.
    private func changedUnderServer(_ kind: LogError.Kind, line: Int? = nil, _ problem: String) -> StoreError {
        .log(LogError(kind, path: path, line: line, message: "\(problem); the log seems to have been changed while the server runs: stop it and run `announcements verify`"))
    }

    func read(_ span: (offset: Int64, count: Int)) throws(StoreError) -> ArraySlice<UInt8> {
        do throws(LogError) {
            return try log.read(from: span.offset, count: span.count)[...]
        } catch {
            throw .log(error)
        }
    }
}
