import AnnouncementsDomain
import Dispatch
import Synchronization

/// The committer: one loop, on `committerQueue`, that turns queued requests into durable events.
///
/// It takes whatever is queued as a *batch*, prepares it (decides, encodes and applies each request
/// to a copy of the state) and hands its lines to the log's syncer (see `LogSyncer`), which writes
/// and syncs everything handed over while its last sync ran, with one write and one sync. So a
/// batch is prepared while the one before it syncs, and the next sync starts the moment the last
/// one ends, with whatever is ready. A batch is *finished* once its lines are durable: its state
/// published, its writers answered, strictly in order. When a write or a sync fails, the writers
/// whose lines it held get the error, the file is cut back to where they began, and the requests
/// of the batches prepared on top of them go back to the front of the queue, to be prepared again
/// on the state as it really is.
extension EventStore {
    /// A batch turned into events and lines, not yet durable.
    struct PreparedBatch {
        var waiters: [Waiter] = []
        /// One outcome per request, in the order of the waiters' requests.
        var outcomes: [Outcome] = []
        /// The indices (in `outcomes`) of the requests that appended a line.
        var appended: [Int] = []
        /// Each appended event's seq, id, and line (start and length in `lines`, without the newline).
        var located: [(seq: Int, id: Int, start: Int, length: Int, link: LineHash)] = []
        /// The appended events that carry an idempotency key, by key (an edit's with the fields before it).
        var keyed: [String: KeyedWrite] = [:]
        var lines: [UInt8] = []
        /// The state once the batch is durable, and the hash of its last line.
        var model: ReadModel
        var hash: LineHash?

        /// An empty batch to prepare on a state whose last line hashes to `hash`.
        init(on model: ReadModel, after hash: LineHash?) {
            self.model = model
            self.hash = hash
        }
    }

    /// An event made by a request with an idempotency key and, for an edit appended by this store,
    /// the announcement's fields before it (what a repeat is compared by: see
    /// `WriteRequest.isRepeat(of:before:)`); a durable one's are looked up when a repeat needs them.
    struct KeyedWrite {
        var event: Event
        var before: WriteRequest.PriorFields?
    }

    /// A batch handed to the syncer: where its lines go in the file (`start == end` when it has none).
    struct HandedOver {
        var batch: PreparedBatch
        var start: Int64
        var end: Int64
    }

    /// The committer: does what the pipeline says (`CommitPipeline.next`) until it says stop; runs
    /// on `committerQueue`, started by the pipeline's `start`.
    func drain() {
        var handedOver: [HandedOver] = []
        while true {
            let inFlight = handedOver.isEmpty ? nil : handedOver.reduce(0) { $0 + $1.batch.outcomes.count }
            switch pipeline.state.withLock({ $0.next(inFlight: inFlight) }) {
            case .stop:
                return
            case .close(let closers):
                closeLog()
                for closer in closers { closer.resume() }
                return
            case .wait:
                pipeline.wakeUp.wait()
                continue
            case .finish:
                break
            case .news(let yieldRole, let catchUp, let waiters):
                // Between batches (nothing in flight): another process's turn with the writer
                // role, then its lines.
                if yieldRole { log.yieldWriterRole() }
                if catchUp { self.catchUp() }
                if !waiters.isEmpty { commit(waiters, after: &handedOver) }
            case .commit(let waiters):
                commit(waiters, after: &handedOver)
            }
            // Answer the writers whose lines are durable.
            finishDurable(&handedOver)
        }
    }

    /// Prepares `waiters`' requests on the state after the batches in flight, and hands their lines
    /// to the syncer; on a shared log with nothing in flight, takes the writer role first.
    private func commit(_ waiters: [Waiter], after handedOver: inout [HandedOver]) {
        if handedOver.isEmpty, log.isShared {
            do throws(LogError) {
                try takeWriterRole(until: (waiters.map(\.since).min() ?? .now) + Self.roleWaitLimit)
            } catch {
                logger.error("cannot take the writer role", metadata: ["log.path": "\(path)", "error": "\(error)"])
                for waiter in waiters { waiter.continuation.resume(returning: waiter.requests.map { _ in .failure(.log(error)) }) }
                return
            }
        }
        let base = handedOver.last.map { ($0.batch.model, $0.batch.hash) } ?? (snapshot, committer.lastHash)
        let start = handedOver.last?.end ?? syncer.end
        var open = HandedOver(batch: PreparedBatch(on: base.0, after: base.1), start: start, end: start)
        let syncsEnded = syncer.syncsEnded.load(ordering: .relaxed)
        let rest = prepare(waiters, into: &open.batch, keyedInFlight: handedOver.map(\.batch.keyed)) {
            // When a sync ends meanwhile, hand over what is ready (the next sync takes it) and
            // answer the writers whose lines are durable; the rest follows.
            syncer.syncsEnded.load(ordering: .relaxed) != syncsEnded
        }
        // Alone (nothing queued, nothing else syncing), sync on this thread: the next thing it
        // would do is wait for that sync anyway.
        let alone = handedOver.isEmpty && rest.isEmpty && pipeline.state.withLock { $0.queuedRequests == 0 } && syncsInline.load(ordering: .relaxed)
        if !rest.isEmpty { putBack(Array(rest)) }
        handOver(&open, inline: alone)
        handedOver.append(open)
    }

    /// Closes the log once the pipeline is closed and everything queued is committed.
    private func closeLog() {
        // An erasure under way finishes first: it writes the log through a descriptor of its own
        // (or a connection), which closing must not pull from under it.
        erasureQueue.sync {}
        // The last snapshot and the head's record, while this process still holds the log's lock.
        if (snapshotter != nil || log is FileLog), logStillHoldsState {
            snapshotter?.writeFinal(snapshotContents(of: snapshot))
            recordHead()
        }
        syncer.close()
        logger.debug("closed the log", metadata: ["log.path": "\(path)"])
    }

    /// Puts waiters back at the front of the pipeline's queue.
    private func putBack(_ waiters: [Waiter]) {
        guard !waiters.isEmpty else { return }
        pipeline.state.withLock { $0.putBack(waiters.map { ($0, $0.requests.count) }) }
    }

    /// Whether the log is still the one the state was folded from: not unusable (changed under
    /// the server, or a write that could not be undone), and, for a file, not replaced, cut or
    /// removed since the last write looked (a restore under a running server, then its stop). A
    /// last snapshot (or head record) of another log's state would replace the one restored
    /// beside this one.
    private var logStillHoldsState: Bool {
        guard syncer.health.state != .unusable else { return false }
        guard let file = log as? FileLog else { return true }
        do throws(LogError) {
            try file.checkUnchanged()
            return true
        } catch {
            logger.warning("not writing a snapshot or the head record at close: the log changed under the server", metadata: ["log.path": "\(path)", "error": "\(error)"])
            return false
        }
    }

    /// Hands a batch's lines to the syncer, after those of the batches before it; with `inline`,
    /// syncs them on this thread when the syncer is idle.
    private func handOver(_ open: inout HandedOver, inline: Bool) {
        let lines = open.batch.lines
        open.batch.lines = []
        open.end += Int64(lines.count)
        guard !lines.isEmpty else { return }
        do throws(LogSyncer.Failure) {
            try syncer.append(lines, count: open.batch.located.count, inline: inline)
        } catch {
            // A failure waits to be seen: this batch was prepared on top of the lines that failed
            // (`finishDurable` sends it back to the queue).
        }
    }

    /// Finishes, in order, the batches whose lines are durable; after a failed write or sync, fails
    /// the batches whose lines it held and sends those after them back to the queue.
    private func finishDurable(_ handedOver: inout [HandedOver]) {
        let (durableEnd, failure) = syncer.progress
        // A batch with no lines is finished with the batches before it (its outcomes read their state).
        let durable = handedOver.prefix { $0.end <= durableEnd }
        if !durable.isEmpty {
            handedOver.removeFirst(durable.count)
            finish(durable)
        }
        guard let failure else { return }
        logger.error("cannot append to the log", metadata: ["log.path": "\(path)", "error": "\(failure.error)"])
        var retried: [Waiter] = []
        for (position, batch) in handedOver.enumerated() {
            if batch.end <= failure.end, batch.start < failure.end {
                // The write or sync held this batch's lines. The first such batch was prepared on
                // durable state up to its first appended event: the outcomes decided before it (a
                // rejected write, an edit that changed nothing) stand; those from it on read the
                // lines that failed (an edit that changed nothing after another made it), and fail.
                // The batches after it were prepared on the lines that failed: all their outcomes fail.
                answer(batch.batch, failingAppendedWith: .log(failure.error), failingAll: position > 0)
            } else {
                retried += batch.batch.waiters
            }
        }
        handedOver.removeAll()
        putBack(retried)
        syncer.resume(after: failure)
    }

    /// Publishes the state after `durable`, batches whose lines are durable, and answers their writers.
    private func finish(_ durable: ArraySlice<HandedOver>) {
        guard let last = durable.last else { return }
        for batch in durable where !batch.batch.keyed.isEmpty {
            committer.keys.merge(batch.batch.keyed.mapValues(\.event.seq)) { $1 }
        }
        let appended = durable.reduce(0) { $0 + $1.batch.appended.count }
        let changed = durable.flatMap { $0.batch.located.map(\.id) }
        let replaced = publish(last.batch.model, hash: last.batch.hash, waking: appended > 0, changed: changed) { index in
            for batch in durable {
                for line in batch.batch.located {
                    index.add(seq: line.seq, id: line.id, offset: batch.start + Int64(line.start), length: line.length, link: line.link)
                }
            }
        }
        syncedEvents.add(appended, ordering: .relaxed)
        for batch in durable { answer(batch.batch) }
        // The replaced state (its chunks no later state shares) is freed here, after the answers.
        _ = consume replaced
    }

    /// Makes `model`, the state after durable lines the last of which hashes to `hash`, what
    /// readers see: the lines go into the index first (`indexing`: whoever sees an event in the
    /// state finds its line), then the state and head are published, followers of the feed woken
    /// (with `waking`) and a due snapshot started. The committer's own lines and those another
    /// process appended (`ingest`) go through here alike. Returns the state it replaced, for the
    /// caller to free when it likes. `changed` names the announcements the lines are about: what
    /// the search index takes in after them.
    func publish(_ model: ReadModel, hash: LineHash?, waking: Bool, changed: [Int], indexing: (inout EventIndex) -> Void) -> ReadModel {
        committer.lastHash = hash
        // Erasures (made here or, on a shared log, by another node): their lines are served sealed
        // until they read back sealed, known before the index, where readers of history and the
        // feed find the erased events.
        let erasedBefore = published.withLock { $0.model.erased }
        let erased = model.erased.count == erasedBefore.count ? [] : model.erased.keys.filter { erasedBefore[$0] == nil }
        let isErasing = !erased.isEmpty
        if isErasing { awaitSeals(of: erased) }
        index.withLock { indexing(&$0) }
        var replaced = model
        let head = hash.map { LogHead(seq: model.seq, hash: $0) }
        published.withLock { published in
            swap(&published.model, &replaced)
            published.head = head
            publishedSeq.store(published.model.seq, ordering: .releasing)
        }
        if !changed.isEmpty {
            search.publish(seq: model.seq) {
                Set(changed).map { SearchIndexer.Change(id: $0, old: replaced.announcement(id: $0), new: model.announcement(id: $0)) }
            }
        }
        if waking { followers.published(model.seq) }
        // What the feed kept of the lines before an erasure may hold its texts, and so may what
        // others keep (`whenErased`).
        if isErasing {
            forgetFeedPages()
            for handler in erasureHandlers.withLock({ $0 }) { handler(erased, model.seq) }
        }
        // A periodic snapshot takes the state as it is now (values, taken in a moment: before the
        // answers, so that a writer answered knows any snapshot due is under way) and is written
        // in the background.
        snapshotter?.published(model) { snapshotContents(of: model) }
        return replaced
    }

    /// Decides, encodes and applies `waiters`' requests on top of `batch`, one waiter after another,
    /// until `stop` says so; returns the waiters it did not get to.
    private func prepare(
        _ waiters: [Waiter],
        into batch: inout PreparedBatch,
        keyedInFlight: [[String: KeyedWrite]],
        stop: () -> Bool
    ) -> ArraySlice<Waiter> {
        let now = max(Timestamp.now(), batch.model.lastAt ?? Timestamp(millisecondsSince1970: 0))
        for (position, waiter) in waiters.enumerated() {
            if position > 0, stop() { return waiters[position...] }
            batch.waiters.append(waiter)
            if waiter.intoEmptyLog, batch.model.seq > 0 {
                batch.outcomes += waiter.requests.map { _ in .success(nil) }
                continue
            }
            for request in waiter.requests {
                let index = batch.outcomes.count
                do throws(StoreError) {
                    if let key = request.key, let original = try keyedWrite(key, batch.keyed, keyedInFlight) {
                        try Self.refuseIfErased(original.event, repeatedBy: request, in: batch.model, rules: rules)
                        let before = if let known = original.before { known } else { try priorFields(of: original.event, neededBy: request) }
                        guard request.isRepeat(of: original.event, before: before) else {
                            // Another writer's event is the audit trail's to tell, not this answer's.
                            throw .keyReused(key: key, seq: original.event.by == request.by ? original.event.seq : nil)
                        }
                        batch.outcomes.append(Self.outcome(repeating: original.event, in: batch.model))
                        continue
                    }
                    guard var event = try batch.model.event(for: confirmingLine(of: request), at: now, rules: rules) else {
                        if case .update(let id, _) = request.action { batch.outcomes.append(.success(batch.model.announcement(id: id))) }
                        continue
                    }
                    let before = event.type == .edited && event.key != nil ? batch.model.announcement(id: event.id).map(WriteRequest.PriorFields.init) : nil
                    event.prev = batch.hash
                    let start = batch.lines.count
                    event.encodeLine(into: &batch.lines, salt: event.isErasable && event.hasData ? committer.salts.salt() : nil)
                    do throws(ApplyProblem) {
                        try batch.model.apply(event)
                    } catch {
                        // `event(for:)` only makes events that apply; this guards the invariant.
                        batch.lines.removeSubrange(start...)
                        throw .invalid([FieldProblem(field: "event", message: error.message)])
                    }
                    let link = LineHash(link: batch.lines[start...])
                    batch.hash = link
                    batch.located.append((event.seq, event.id, start, batch.lines.count - start, link))
                    if let key = event.key { batch.keyed[key] = KeyedWrite(event: event, before: before) }
                    batch.lines.append(UInt8(ascii: "\n"))
                    batch.appended.append(index)
                    batch.outcomes.append(.success(batch.model.announcement(id: event.id)))
                } catch {
                    batch.outcomes.append(.failure(error))
                }
            }
        }
        return []
    }

    /// `request`, expecting a revision no announcement is at (0) when the line it expects at its
    /// expected revision is not this log's: its ETag came from another history. Checked here, where
    /// a shared log's lines have been taken in (a node behind the writer that answered the ETag
    /// has the line now). A line in a batch not yet durable is not indexed: no writer was answered
    /// with its tag, so none can expect it.
    private func confirmingLine(of request: WriteRequest) -> WriteRequest {
        guard let line = request.expectedLine, let revision = request.expectedRevision,
              index.withLock({ $0.lineTag(of: revision) }) != line
        else { return request }
        var request = request
        request.expectedRevision = 0
        return request
    }

    /// The event idempotency key `key` made: in this batch, in one in flight, or durable.
    private func keyedWrite(_ key: String, _ batch: [String: KeyedWrite], _ inFlight: [[String: KeyedWrite]]) throws(StoreError) -> KeyedWrite? {
        if let write = batch[key] ?? inFlight.reversed().lazy.compactMap({ $0[key] }).first { return write }
        guard let seq = committer.keys[key] else { return nil }
        return KeyedWrite(event: try storedEvent(seq: seq))
    }

    /// The fields of `event`'s announcement before it that `request`, a repeat of its key, is
    /// compared with (`WriteRequest.priorFieldsNeeded`): read from the log, walking back from the
    /// announcement's event before `event` one line at a time until each is found (its creation
    /// holds both). Runs on the committer, and only for a repeat that sets a field the event
    /// does not hold. A line found sealed (an erasure this store has not taken in yet) ends the
    /// walk: a field not found is not the same as any.
    private func priorFields(of event: Event, neededBy request: WriteRequest) throws(StoreError) -> WriteRequest.PriorFields {
        var (needsTitle, needsBody) = request.priorFieldsNeeded(by: event)
        var fields = WriteRequest.PriorFields()
        var seq = event.seq
        while needsTitle || needsBody, let previous = index.withLock({ $0.previousSeq(ofSameIDAs: seq) }) {
            seq = previous
            switch try storedEvent(seq: seq).change {
            case .created(let draft):
                if needsTitle { fields.title = draft.title }
                if needsBody { fields.body = .some(draft.bodyText) }
                return fields
            case .edited(let patch):
                if needsTitle, let title = patch.title { fields.title = title; needsTitle = false }
                if needsBody, let body = patch.body { fields.body = .some(body.text); needsBody = false }
            case .deleted, .erased, .sealed:
                return fields
            }
        }
        return fields
    }

    /// Refuses, with the 410 of an erased announcement, a request that repeats `original`'s key
    /// with its action (same writer, same kind, same announcement) when `original`'s announcement
    /// is erased: before its texts are compared, since a 410 for a match and a 422 for a mismatch
    /// would confirm a guess of the erased texts. Any other request with the key is the 422 of a
    /// reused key, which says nothing of the texts. A request with problems of its own (a control
    /// character in its title) is refused for them first, as any write is.
    private static func refuseIfErased(_ original: Event, repeatedBy request: WriteRequest, in model: ReadModel, rules: ValidationRules) throws(StoreError) {
        guard request.isSameAction(as: original), let erased = model.erased[original.id] else { return }
        try request.check(rules)
        throw .erased(id: original.id, seq: erased)
    }

    /// What a repeat of the request that made `original` gets: the first one's outcome. A
    /// created announcement as it was created; an edited one as it is now; nothing for a delete.
    private static func outcome(repeating original: Event, in model: ReadModel) -> Outcome {
        if let erased = model.erased[original.id] { return .failure(.erased(id: original.id, seq: erased)) }
        return switch original.change {
        case .created(let draft):
            .success(Announcement(id: original.id, created: draft, revision: original.seq, by: original.by, at: original.at))
        case .edited:
            model.announcement(id: original.id).map { .success($0) } ?? .failure(.notFound(id: original.id))
        case .deleted, .erased, .sealed:
            .success(nil)
        }
    }

    /// Answers a batch's writers; with `error`, every request from its first appended write on
    /// fails with it (with `failingAll`, every request does): each was decided on a state that
    /// held that write's line.
    private func answer(_ batch: PreparedBatch, failingAppendedWith error: StoreError? = nil, failingAll: Bool = false) {
        var outcomes = batch.outcomes
        if let error, let first = failingAll ? 0 : batch.appended.first {
            for index in first..<outcomes.count { outcomes[index] = .failure(error) }
        }
        var start = 0
        for waiter in batch.waiters {
            waiter.continuation.resume(returning: Array(outcomes[start..<(start + waiter.requests.count)]))
            start += waiter.requests.count
        }
    }
}
