import AnnouncementsDomain
import Dispatch

/// Erasure: an announcement's texts, in every version it had, taken out of the log for good,
/// while the chain still proves every line (see `LineHash(link:)` and events/README.md).
///
/// 1. The `erased` event is appended like any write (who, when, why): from then on the
///    announcement is gone from the read models, and its past states are refused.
/// 2. Every earlier line of it that holds data is overwritten in place by its sealed form
///    (`EventLog.eraseDurably`, crash-safe through a journal), and copies the log keeps beside it
///    that hold its texts (torn lines set aside) are removed.
/// 3. What the store keeps of those lines is dropped: the feed's page cache, and the snapshot
///    (deleted at once; the next one is written from the state without them).
///
/// A crash after step 1, or a failure anywhere in step 2, leaves the erased event in the log:
/// every open overwrites what is left before it serves (`finishErasures`), and erasing again runs
/// steps 2 and 3 in full, even when no line is left to overwrite (an attempt may have failed
/// after its overwrite).
extension EventStore {
    /// What an erasure did.
    public struct Erasure: Sendable, Hashable {
        /// The erased event's seq.
        public var seq: Int
        /// The lines overwritten by their sealed forms.
        public var sealedLines: [Int]
        /// Whether it finished an earlier erasure (by event `seq`), whose overwrite had failed,
        /// rather than made one.
        public var finishedEarlier = false
    }

    /// Erases announcement `id` (live or deleted) for `reason`, by `writer`.
    public func erase(id: Int, by writer: String, reason: String) async throws(StoreError) -> Erasure {
        guard log.erasesInPlace else {
            throw .unsupported("this log (\(path)) cannot overwrite lines in place, which erasure needs")
        }
        guard let history = try await history(id: id) else { throw .notFound(id: id) }
        if let erasure = history.first(where: { $0.event.type == .erased }) {
            // Erased already: finish the sealing if it was interrupted (a failed overwrite): what
            // was asked for is done, and the answer says so (a client that sent the erasure again
            // after its 503 learns what became of it); else there is nothing left to erase.
            let sealed = try await finishSealing(id, erasedAt: erasure.event.seq)
            guard sealed.isEmpty else { return Erasure(seq: erasure.event.seq, sealedLines: sealed, finishedEarlier: true) }
            throw .erased(id: id, seq: erasure.event.seq)
        }
        let old = history.filter { !$0.event.isErasable && $0.event.hasData }.map { $0.event.seq }
        guard old.isEmpty else { throw .needsUpgrade(id: id, lines: old) }
        _ = try await submit(WriteRequest(action: .erase(id: id, reason: reason), by: writer)).get()
        let seq = snapshot.erased[id] ?? lastSeq
        let sealed = try await finishSealing(id, erasedAt: seq)
        logger.notice("erased an announcement", metadata: [
            "event.id": "\(id)", "event.seq": "\(seq)", "writer": "\(writer)", "log.lines_sealed": "\(sealed.count)",
        ])
        return Erasure(seq: seq, sealedLines: sealed)
    }

    /// Seals the lines of announcement `id`, erased by event `seq`, and finishes the erasure (see
    /// `seal`); returns the seqs it sealed. A failure says that the erased event is in the log,
    /// what is left, and how to finish.
    @discardableResult
    private func finishSealing(_ id: Int, erasedAt seq: Int) async throws(StoreError) -> [Int] {
        do throws(StoreError) {
            return try await onErasureQueue { () throws(StoreError) in try self.seal([id], finishing: true)[id] ?? [] }
        } catch {
            guard case .log(var problem) = error else { throw error }
            if problem.kind == .copiesLeft {
                problem.message = "announcement \(id) is erased (event \(seq)) and its lines overwritten, but \(problem.message)"
            } else {
                problem.message = "announcement \(id) is erased (event \(seq)), but its lines could not be overwritten yet: \(problem.message). Erase it again, or restart the server, to finish"
                // The overwrite (or its journal) failed, not the log's appends or reads: it takes
                // writes and serves. (A file replaced meanwhile, or a database out of reach, says so.)
                if problem.kind == .writeFailed || problem.kind == .unreadable { problem.kind = .sealsLeft }
                logger.error("an erasure could not overwrite its lines: they hold its texts until it is erased again or the server restarts", metadata: [
                    "log.path": "\(path)", "event.id": "\(id)", "event.seq": "\(seq)", "error": "\(problem.message)",
                ])
            }
            throw .log(problem)
        }
    }

    /// How many erasures this store has made: caches of the feed's lines made before the last
    /// one are not served (see `EventStream.Frames`).
    public var erasureCount: Int { erasures.load(ordering: .acquiring) }

    /// Seals what erasures left unsealed (a crash between an erased event and its overwrite), and
    /// finishes what an attempt left undone after its overwrite: at open, before the store serves,
    /// in one overwrite for every erased announcement.
    func finishErasures() throws(StoreError) {
        let sealed = try seal(snapshot.erased.keys.sorted(), finishing: false)
        erasuresFinishedAtOpen.withLock { $0 = sealed }
        for (id, seqs) in sealed.sorted(by: { $0.key < $1.key }) {
            logger.notice("finished an interrupted erasure", metadata: ["event.id": "\(id)", "log.lines_sealed": "\(seqs.count)"])
        }
    }

    /// The lines of announcement `id` that this store's open sealed, finishing an erasure a crash
    /// or a failure interrupted; nil when it finished none of it.
    public func erasureFinishedAtOpen(id: Int) -> [Int]? {
        erasuresFinishedAtOpen.withLock { $0[id] }
    }

    /// Overwrites the lines of announcements `ids` that still hold data by their sealed forms, and
    /// drops what the store keeps of them; returns their seqs, by announcement. With `finishing` (an erasure asked
    /// for, again or for the first time), the log's finishing steps (on PostgreSQL the notice to
    /// other nodes and `VACUUM FULL`) run also when no line was left to overwrite: an earlier
    /// attempt may have overwritten them and failed after. Without it (at open) they run only
    /// when lines were overwritten, so that a start does not lock a table for nothing.
    private func seal(_ ids: [Int], finishing: Bool) throws(StoreError) -> [Int: [Int]] {
        var replacements: [LineReplacement] = []
        var secrets: [[UInt8]] = []
        var sealedSeqs: [Int: [Int]] = [:]
        for id in ids {
            let lines = try sealing(id)
            replacements += lines.replacements
            secrets += lines.secrets
            if !lines.seqs.isEmpty { sealedSeqs[id] = lines.seqs }
        }
        // First what the store keeps of these lines: the snapshot (which a crash after the
        // overwrite must not leave behind; again on a retry, in case it could not be deleted),
        // and the feed's pages.
        var undeleted: [String] = []
        if !replacements.isEmpty || finishing {
            if let snapshotter {
                undeleted = snapshotter.erased(count: snapshot.erased.count)
            } else if log is FileLog {
                // Snapshots are off, but one may be left from before.
                undeleted = Snapshotter.delete(besideLog: path, logger: logger)
            }
        }
        if !replacements.isEmpty {
            forgetFeedPages()
        }
        guard finishing || !replacements.isEmpty else { return [:] }
        // After the overwrite, failed or not, and also when this attempt had nothing left to
        // overwrite: pages read while an attempt overwrote the lines may hold their texts.
        defer { forgetFeedPages() }
        do throws(LogError) {
            try log.eraseDurably(replacements, secrets: secrets)
        } catch {
            // Overwritten all the same: what is left is beside the lines (see `copiesLeft`).
            if error.kind == .copiesLeft { unconfirmedSeals.withLock { $0.erased.subtract(ids) } }
            throw .log(error)
        }
        // Read back sealed from here on: readers may read the lines as they are.
        unconfirmedSeals.withLock { $0.erased.subtract(ids) }
        if let first = undeleted.first, finishing {
            // The lines are sealed; a copy of them is left beside the log (and `backup` copies
            // it). At open, the error logged is all: the store serves the sealed lines.
            throw .log(LogError(.copiesLeft, path: path, message: "the snapshot beside the log cannot be deleted (\(first)), and it may hold the erased texts: delete it by hand, or fix its folder and erase again"))
        }
        return sealedSeqs
    }

    /// The sealed forms of announcement `id`'s lines that still hold data, at their positions;
    /// what to look for in copies of them beside the log (its texts, and its id); their seqs.
    func sealing(_ id: Int) throws(StoreError) -> (replacements: [LineReplacement], secrets: [[UInt8]], seqs: [Int]) {
        let spans = index.withLock { index in index.seqs(of: id)?.compactMap { seq in index.span(seq...seq).map { (seq, $0) } } } ?? []
        var replacements: [LineReplacement] = []
        var secrets: [[UInt8]] = [Array(#""id":\#(id),"#.utf8)]
        var seqs: [Int] = []
        for (seq, span) in spans {
            let bytes = try read(span)
            let line = bytes[..<(bytes.endIndex - 1)]
            let event = try parse(line, at: span.offset)
            guard let sealed = try sealedForm(of: line, event) else { continue }
            secrets += Self.texts(of: event)
            replacements.append(LineReplacement(position: span.offset, bytes: sealed))
            seqs.append(seq)
        }
        return (replacements, secrets, seqs)
    }

    /// Calls `handler` with the ids of the announcements just erased (by this store or, on a shared
    /// log, another node's) and the seq of the state without them, once readers get that state:
    /// what keeps their texts elsewhere (a cache of encoded answers) lets them go, and keeps none
    /// made from an older state.
    public func whenErased(_ handler: @escaping @Sendable (_ ids: [Int], _ seq: Int) -> Void) {
        erasureHandlers.withLock { $0.append(handler) }
    }

    /// The announcements erased whose overwrite has not been read back yet (`unconfirmedSeals`:
    /// under way, failed, or another process's). Taken by a reader after it found its lines in
    /// the index and before it reads them: `publish` adds an erasure here before its event is in
    /// the index, and it leaves only once its lines read back sealed, so a reader either has it
    /// here or reads its lines sealed.
    func erasuresWaitingForSeals() -> Set<Int> {
        unconfirmedSeals.withLock { $0.erased }
    }

    /// How many erased announcements still have lines this store has not read back sealed: an
    /// overwrite that failed (erasing again, or the next start, finishes it), or another node's
    /// on a shared log, not come yet. What to alert on while it stays above 0: their texts are
    /// on disk.
    public var unsealedErasures: Int {
        unconfirmedSeals.withLock { $0.erased.count }
    }

    /// `lines`, stored lines, as history and the feed serve them: a line of an announcement in
    /// `waiting` (`erasuresWaitingForSeals()`, taken before the lines were read) in the sealed
    /// form the overwrite gives it, byte for byte. So no reader gets the texts of an erased
    /// announcement while its lines still hold them, and what it gets (and its ETag) stays true
    /// once they are overwritten. Costs nothing while no erasure waits; while one does, an id
    /// read from each line's start, and a parse only of that announcement's lines.
    func sealedView(of lines: [ArraySlice<UInt8>], waiting: Set<Int>) throws(StoreError) -> [ArraySlice<UInt8>] {
        guard !waiting.isEmpty else { return lines }
        var view = lines
        for (position, line) in lines.enumerated() {
            if let id = Event.storedID(inLine: line), !waiting.contains(id) { continue }
            // A line that does not parse is left for the reader's own checks to report.
            guard let event = try? EventParser.parse(line), waiting.contains(event.id), let sealed = try sealedForm(of: line, event) else { continue }
            view[position] = sealed[...]
        }
        return view
    }

    /// What an erasure writes in place of `line` (`event`'s, of an erased announcement): its
    /// sealed form; nil when it has nothing to seal (no data, or the erased event itself, which
    /// keeps its reason: it is the record of the erasure).
    private func sealedForm(of line: ArraySlice<UInt8>, _ event: Event) throws(StoreError) -> [UInt8]? {
        guard event.isSealedByErasure else { return nil }
        guard let sealed = line.withUnsafeBytes({ SealableLine.sealed($0) }) else {
            throw .log(LogError(.invalidLine, path: path, line: event.seq, message: "holds data of erased announcement \(event.id) but is not laid out as the store writes lines, so it cannot be sealed: stop the server, and correct the line or restore the log"))
        }
        return sealed
    }

    /// Drops the feed's pages, here and in the HTTP streams' caches (by counting an erasure):
    /// after an erasure, when the lines of its announcement are sealed, and when its event is
    /// published (another node's erasure, on a shared log, is sealed by that node).
    func forgetFeedPages() {
        // Emptied before the count goes up: a page read after it and framed under the new count
        // is read from the log as it is now.
        feedPages.withLock { $0.removeAll() }
        erasures.add(1, ordering: .releasing)
    }

    /// An event's texts as its line spells them (JSON-escaped), for finding copies of them.
    private static func texts(of event: Event) -> [[UInt8]] {
        var texts: [[UInt8]] = []
        func add(_ text: JSONText?) {
            guard let text, text.escaped.count >= 4 else { return }
            texts.append(text.escaped)
        }
        switch event.change {
        case .created(let draft):
            add(JSONText(draft.title))
            add(draft.bodyText)
        case .edited(let patch):
            add(patch.title.map(JSONText.init))
            add(patch.body?.text)
        case .deleted, .erased, .sealed:
            break
        }
        return texts
    }

    /// Runs `body` on the erasure queue, one erasure at a time, off Swift's cooperative pool (it
    /// syncs the disk).
    private func onErasureQueue<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, StoreError>, Never>) in
            erasureQueue.async { continuation.resume(returning: Result { () throws(StoreError) in try body() }) }
        }
        return try result.get()
    }
}
