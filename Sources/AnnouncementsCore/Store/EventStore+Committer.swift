import Dispatch
import Synchronization

/// The committer: one loop, on `committerQueue`, that turns queued requests into durable events.
///
/// It is pipelined. A batch is *prepared* (decided, encoded, applied to a copy of the state), then
/// *written*, then *synced* on `syncQueue`, and only then *finished*: its state published and its
/// writers answered. Up to `pipelineDepth` written batches wait for their syncs at once, each
/// prepared on the state of the one before, so the next sync starts the moment the last one ends.
/// Batches finish strictly in order. When a sync fails, that batch's writers get the error, the file
/// is cut back to where the batch began, and the requests of the batches behind it (written on top
/// of it) go back to the front of the queue, to be prepared again on the state as it really is.
extension EventStore {
    /// A batch turned into events and lines, not yet durable.
    struct PreparedBatch {
        var waiters: [Waiter]
        /// One outcome per request, in the order of the waiters' requests.
        var outcomes: [Outcome]
        /// The indices (in `outcomes`) of the requests that appended a line.
        var appended: [Int]
        /// Each appended event's seq, id, and line (start and length in `lines`, without the newline).
        var located: [(seq: Int, id: Int, start: Int, length: Int)] = []
        /// The appended events that carry an idempotency key, with their requests' fingerprints, by key.
        var keyed: [String: KeyedWrite] = [:]
        /// The indices (in `outcomes`) of repeats answered from an event of this same batch: they
        /// stand or fall with it.
        var repeats: [Int] = []
        var lines: [UInt8]
        /// The state once the batch is durable, and the hash of its last line.
        var model: ReadModel
        var hash: LineHash?
    }

    /// An event made by a request with an idempotency key, and that request's fingerprint (nil
    /// when the event was read back from the log at start-up).
    struct KeyedWrite {
        var event: Event
        var fingerprint: LineHash?
    }

    /// A written batch and its sync.
    struct InFlight {
        var batch: PreparedBatch
        /// Where its bytes start and end in the file; equal when it appended nothing.
        var start: Int64
        var end: Int64
        /// Its sync, or nil when it appended nothing.
        var ticket: SyncTicket?
    }

    /// A sync running on `syncQueue`.
    ///
    /// `@unchecked Sendable`: `error` is written once, by the sync, before `isDone` (released) and
    /// `done.signal()`; it is read only after `done.wait()` or an acquiring load of `isDone`
    /// that saw true, which order the two.
    final class SyncTicket: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        /// Set with `done`, for a look that does not wait.
        let isDone = Atomic(false)
        var error: LogError?
    }

    /// How many written batches may wait for their syncs at once.
    static let pipelineDepth = 2

    /// Commits batches until nothing is queued or in flight; runs on `committerQueue`.
    func drain() {
        var lastBatchSize = 0
        var inFlight: [InFlight] = []
        while true {
            gatherStragglers(expecting: lastBatchSize, whileSyncing: inFlight.first?.ticket)
            let idle = inFlight.isEmpty
            let (waiters, closers) = queue.withLock { queue in
                let waiters = queue.takeAll()
                var closers: [CheckedContinuation<Void, Never>] = []
                if waiters.isEmpty, idle {
                    queue.isCommitting = false
                    if queue.isClosed { swap(&closers, &queue.closers) }
                }
                return (waiters, closers)
            }
            if waiters.isEmpty {
                if !inFlight.isEmpty {
                    finishOldest(&inFlight)
                    continue
                }
                if !closers.isEmpty {
                    committer.log?.close()
                    committer.log = nil
                    logger.debug("closed the log", metadata: ["log.path": "\(path)"])
                    for closer in closers { closer.resume() }
                }
                return
            }
            lastBatchSize = waiters.reduce(0) { $0 + $1.requests.count }

            let base = inFlight.last.map { ($0.batch.model, $0.batch.hash) } ?? (snapshot, committer.lastHash)
            let prepared = prepare(waiters, on: base.0, after: base.1, keyedInFlight: inFlight.map(\.batch.keyed)) {
                // Writers whose sync has ended are answered at once, not once this batch is ready:
                // the sooner they have their answer, the sooner they send their next write.
                while let oldest = inFlight.first, oldest.ticket?.isDone.load(ordering: .acquiring) != false, oldest.ticket?.error == nil {
                    finishOldest(&inFlight)
                }
            }
            var retried: Int?
            while let oldest = inFlight.first, inFlight.count >= Self.pipelineDepth || oldest.ticket?.isDone.load(ordering: .acquiring) != false {
                if let count = finishOldest(&inFlight) { retried = count }
            }
            if let retried {
                // A batch this one was prepared on failed: prepare it again, after the batches
                // that were behind the failed one, on the state as it really is.
                queue.withLock { $0.insert(waiters, at: retried) }
                continue
            }
            switch write(prepared) {
            case .written(let written):
                inFlight.append(written)
            case .failed(let error):
                // Settle the batches before this one first: their syncs must report their own errors,
                // and this batch was prepared on their state.
                var retried: Int?
                while !inFlight.isEmpty {
                    if let count = finishOldest(&inFlight) { retried = count }
                }
                // `LogFile.write` has already cut the file back to `start` (and a failed batch
                // before it, further back).
                if let retried {
                    queue.withLock { $0.insert(waiters, at: retried) }
                } else {
                    answer(prepared, failingAppendedWith: .log(error))
                }
            }
        }
    }

    /// Decides, encodes and applies a batch on top of `model`, whose last line hashes to `hash`.
    /// `keyedInFlight` holds the keyed events of the batches written but not yet durable, oldest first.
    /// Calls `between` after each request, to finish batches whose syncs end meanwhile (a failed
    /// one is left to the caller, for it changes what this batch was prepared on).
    private func prepare(
        _ waiters: [Waiter],
        on model: ReadModel,
        after hash: LineHash?,
        keyedInFlight: [[String: KeyedWrite]],
        between: () -> Void
    ) -> PreparedBatch {
        var batch = PreparedBatch(waiters: waiters, outcomes: [], appended: [], lines: [], model: model, hash: hash)
        let now = max(Timestamp.now(), model.lastAt ?? Timestamp(millisecondsSince1970: 0))
        for (index, request) in waiters.flatMap(\.requests).enumerated() {
            if index > 0 { between() }
            do throws(StoreError) {
                if let key = request.key, let original = try keyedWrite(key, batch.keyed, keyedInFlight) {
                    guard request.isRepeat(of: original.event, fingerprint: original.fingerprint) else {
                        throw .keyReused(key: key, seq: original.event.seq)
                    }
                    if batch.keyed[key] != nil { batch.repeats.append(index) }
                    batch.outcomes.append(Self.outcome(repeating: original.event, in: batch.model))
                    continue
                }
                guard var event = try batch.model.event(for: request, at: now, rules: rules) else {
                    if case .update(let id, _) = request.action { batch.outcomes.append(.success(batch.model.announcement(id: id))) }
                    continue
                }
                event.prev = batch.hash
                let start = batch.lines.count
                event.encodeLine(into: &batch.lines)
                do throws(ApplyProblem) {
                    try batch.model.apply(event)
                } catch {
                    // `event(for:)` only makes events that apply; this guards the invariant.
                    batch.lines.removeSubrange(start...)
                    throw .invalid([FieldProblem(field: "event", message: error.message)])
                }
                batch.hash = LineHash(of: batch.lines[start...])
                batch.located.append((event.seq, event.id, start, batch.lines.count - start))
                if let key = event.key { batch.keyed[key] = KeyedWrite(event: event, fingerprint: request.fingerprint) }
                batch.lines.append(UInt8(ascii: "\n"))
                batch.appended.append(index)
                batch.outcomes.append(.success(batch.model.announcement(id: event.id)))
            } catch {
                batch.outcomes.append(.failure(error))
            }
        }
        return batch
    }

    /// The event idempotency key `key` made: in this batch, in one in flight, or durable.
    private func keyedWrite(_ key: String, _ batch: [String: KeyedWrite], _ inFlight: [[String: KeyedWrite]]) throws(StoreError) -> KeyedWrite? {
        if let write = batch[key] ?? inFlight.reversed().lazy.compactMap({ $0[key] }).first { return write }
        guard let durable = committer.keys[key] else { return nil }
        return KeyedWrite(event: try storedEvent(seq: durable.seq), fingerprint: durable.fingerprint)
    }

    /// What a repeat of the request that made `original` gets: the first one's outcome. A
    /// created announcement as it was created; an edited one as it is now; nothing for a delete.
    private static func outcome(repeating original: Event, in model: ReadModel) -> Outcome {
        switch original.change {
        case .created(let draft):
            .success(Announcement(id: original.id, created: draft, revision: original.seq))
        case .edited:
            model.announcement(id: original.id).map { .success($0) } ?? .failure(.notFound(id: original.id))
        case .deleted:
            .success(nil)
        }
    }

    /// What became of a batch handed to `write`.
    enum WriteResult {
        /// Written (or with nothing to write), its sync started: it is answered in its turn.
        case written(InFlight)
        /// The write failed, and `LogFile.write` cut the file back to where it began; the caller
        /// settles the batches before it.
        case failed(LogError)
    }

    /// Writes a prepared batch and starts its sync on `syncQueue`. A batch that appends nothing
    /// goes in flight without a sync.
    private func write(_ batch: PreparedBatch) -> WriteResult {
        guard let log = committer.log else {
            // The log is closed only once nothing is queued or in flight, so this is a safeguard.
            return .failed(LogError(.unusable, path: path, message: "the log is closed; restart the server"))
        }
        let start = log.writtenEnd
        guard !batch.lines.isEmpty else { return .written(InFlight(batch: batch, start: start, end: start, ticket: nil)) }
        let end: Int64
        do throws(LogError) {
            end = try batch.lines.withBytes(log.write)
        } catch {
            logger.error("cannot append to the log", metadata: ["log.path": "\(path)", "error": "\(error)"])
            return .failed(error)
        }
        let ticket = SyncTicket()
        syncQueue.async {
            do throws(LogError) { try log.sync() } catch { ticket.error = error }
            ticket.isDone.store(true, ordering: .releasing)
            ticket.done.signal()
            self.arrivals.signal()
        }
        return .written(InFlight(batch: batch, start: start, end: end, ticket: ticket))
    }

    /// Waits for the oldest batch's sync and answers its writers: publishing its state when it
    /// is durable; otherwise cutting the file back and sending the batches behind it back to the
    /// front of the queue. Returns nil when durable, else how many requests went back.
    @discardableResult
    private func finishOldest(_ inFlight: inout [InFlight]) -> Int? {
        let oldest = inFlight.removeFirst()
        oldest.ticket?.done.wait()
        if let error = oldest.ticket?.error {
            logger.error("cannot sync the log", metadata: ["log.path": "\(path)", "error": "\(error)"])
            for later in inFlight { later.ticket?.done.wait() }
            committer.log?.cutBack(to: oldest.start)
            let retried = inFlight.flatMap(\.batch.waiters)
            inFlight.removeAll()
            queue.withLock { $0.insert(retried, at: 0) }
            answer(oldest.batch, failingAppendedWith: .log(error))
            return retried.count
        }
        committer.log?.markDurable(upTo: oldest.end)
        committer.lastHash = oldest.batch.hash
        committer.keys.merge(oldest.batch.keyed.mapValues { ($0.event.seq, $0.fingerprint) }) { $1 }
        // Index before publishing: whoever sees an event in the snapshot finds its line.
        if !oldest.batch.located.isEmpty {
            index.withLock { index in
                for line in oldest.batch.located {
                    index.add(seq: line.seq, id: line.id, offset: oldest.start + Int64(line.start), length: line.length)
                }
            }
        }
        published.withLock { $0 = oldest.batch.model }
        if !oldest.batch.located.isEmpty { followers.published(oldest.batch.model.seq) }
        if !oldest.batch.appended.isEmpty {
            syncedBatches.add(1, ordering: .relaxed)
            syncedEvents.add(oldest.batch.appended.count, ordering: .relaxed)
        }
        answer(oldest.batch)
        return nil
    }

    private func answer(_ batch: PreparedBatch, failingAppendedWith error: StoreError? = nil) {
        var outcomes = batch.outcomes
        if let error {
            for index in batch.appended + batch.repeats { outcomes[index] = .failure(error) }
        }
        var start = 0
        for waiter in batch.waiters {
            waiter.continuation.resume(returning: Array(outcomes[start..<(start + waiter.requests.count)]))
            start += waiter.requests.count
        }
    }

    /// Under load, gives the writers just answered a moment to send their next writes, so that
    /// they share the next sync instead of trickling into many small ones.
    ///
    /// Waits only while some writes are queued but fewer than the last batch had: a lone writer
    /// never waits. With a sync running, waits at most until it ends (a new batch would only queue
    /// behind it); with none, at most `stragglerWait`. A sync costs about the same for one line as
    /// for a hundred, so fuller batches are what make throughput.
    private func gatherStragglers(expecting expected: Int, whileSyncing sync: SyncTicket?) {
        guard expected > 1 else { return }
        let deadline = DispatchTime.now() + Self.stragglerWait
        while true {
            let queued = queue.withLock { queue in
                queue.wakeAt = expected
                return queue.requestCount
            }
            if queued >= expected { return }
            if let sync {
                if sync.isDone.load(ordering: .acquiring) { return }
                arrivals.wait()
            } else {
                if queued == 0 || arrivals.wait(timeout: deadline) == .timedOut { return }
            }
        }
    }

    /// The longest a batch waits for more writers when no sync is running: far below a sync's cost.
    static let stragglerWait = DispatchTimeInterval.microseconds(200)
}

