import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The committer: one loop, on `committerQueue`, that turns queued requests into durable events.
///
/// It is pipelined: while batch N is being synced (on `syncQueue`), batch N+1 is prepared — decided,
/// encoded and applied to a copy of the state that includes N. Once N's sync succeeds, N's state is
/// published and its writers answered, and N+1 is written and its sync started. If N's sync fails,
/// N's writers get the error, the file is cut back, and N+1's requests go back to the front of the
/// queue to be prepared again on the state as it really is.
extension EventStore {
    /// A batch turned into events and lines, not yet durable.
    struct PreparedBatch {
        var waiters: [Waiter]
        var outcomes: [Result<Announcement?, StoreError>]
        /// The indices of the requests that appended a line.
        var appended: [Int]
        var lines: [UInt8]
        /// The state once the batch is durable, and the hash of its last line.
        var model: ReadModel
        var hash: LineHash?
    }

    /// A sync running on `syncQueue`.
    ///
    /// `@unchecked Sendable`: `error` is written once, by the sync, before `done.signal()`, and read
    /// only after `done.wait()`; the semaphore orders the two.
    final class SyncTicket: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        /// Set with `done`, for a look that does not wait.
        let isDone = Atomic(false)
        var error: LogError?
    }

    /// Commits batches until nothing is queued or in flight; runs on `committerQueue`.
    func drain() {
        var lastBatchSize = 0
        var inFlight: (batch: PreparedBatch, ticket: SyncTicket)?
        while true {
            gatherStragglers(expecting: lastBatchSize, whileSyncing: inFlight?.ticket)
            let idle = inFlight == nil
            let (waiters, closers) = queue.withLock { queue in
                let waiters = queue.waiting
                queue.waiting = []
                var closers: [CheckedContinuation<Void, Never>] = []
                if waiters.isEmpty, idle {
                    queue.isCommitting = false
                    if queue.isClosed { swap(&closers, &queue.closers) }
                }
                return (waiters, closers)
            }
            if waiters.isEmpty {
                if let flight = inFlight {
                    inFlight = nil
                    _ = finish(flight.batch, flight.ticket)
                    continue
                }
                if !closers.isEmpty {
                    committer.log = nil
                    logger.debug("closed the log", metadata: ["log.path": "\(path)"])
                    for closer in closers { closer.resume() }
                }
                return
            }
            lastBatchSize = waiters.count

            let base = inFlight.map { ($0.batch.model, $0.batch.hash) } ?? (snapshot, committer.lastHash)
            let prepared = prepare(waiters, on: base.0, after: base.1)
            if let flight = inFlight {
                inFlight = nil
                guard finish(flight.batch, flight.ticket) else {
                    // `prepared` was built on a batch that never became durable: prepare it again.
                    queue.withLock { $0.waiting.insert(contentsOf: waiters, at: 0) }
                    continue
                }
            }
            if let ticket = start(prepared) {
                inFlight = (prepared, ticket)
            }
        }
    }

    /// Decides, encodes and applies a batch on top of `model`, whose last line hashes to `hash`.
    private func prepare(_ waiters: [Waiter], on model: ReadModel, after hash: LineHash?) -> PreparedBatch {
        var batch = PreparedBatch(waiters: waiters, outcomes: [], appended: [], lines: [], model: model, hash: hash)
        batch.outcomes.reserveCapacity(waiters.count)
        let now = max(Timestamp.now(), model.lastAt ?? Timestamp(millisecondsSince1970: 0))
        for (index, waiter) in waiters.enumerated() {
            do throws(StoreError) {
                let request = waiter.request
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
                batch.lines.append(UInt8(ascii: "\n"))
                batch.appended.append(index)
                batch.outcomes.append(.success(batch.model.announcement(id: event.id)))
            } catch {
                batch.outcomes.append(.failure(error))
            }
        }
        return batch
    }

    /// Writes a prepared batch and starts its sync; answers it at once when it appends nothing or
    /// its write fails. Returns the running sync, if any.
    private func start(_ batch: PreparedBatch) -> SyncTicket? {
        guard !batch.lines.isEmpty else {
            answer(batch)
            return nil
        }
        guard let log = committer.log else {
            answer(batch, failingAppendedWith: .closed)
            return nil
        }
        do throws(LogError) {
            try batch.lines.withBytes(log.write)
        } catch {
            logger.error("cannot append to the log", metadata: ["log.path": "\(path)", "error": "\(error)"])
            answer(batch, failingAppendedWith: .log(error))
            return nil
        }
        let ticket = SyncTicket()
        syncQueue.async {
            do throws(LogError) { try log.sync() } catch { ticket.error = error }
            ticket.isDone.store(true, ordering: .releasing)
            ticket.done.signal()
        }
        return ticket
    }

    /// Waits for a batch's sync; publishes its state on success. Answers its writers either way.
    /// Returns whether the batch became durable.
    private func finish(_ batch: PreparedBatch, _ ticket: SyncTicket) -> Bool {
        ticket.done.wait()
        if let error = ticket.error {
            logger.error("cannot sync the log", metadata: ["log.path": "\(path)", "error": "\(error)"])
            answer(batch, failingAppendedWith: .log(error))
            return false
        }
        committer.lastHash = batch.hash
        published.withLock { $0 = batch.model }
        syncedBatches.add(1, ordering: .relaxed)
        syncedEvents.add(batch.appended.count, ordering: .relaxed)
        answer(batch)
        return true
    }

    private func answer(_ batch: PreparedBatch, failingAppendedWith error: StoreError? = nil) {
        var outcomes = batch.outcomes
        if let error {
            for index in batch.appended { outcomes[index] = .failure(error) }
        }
        for (waiter, outcome) in zip(batch.waiters, outcomes) {
            waiter.continuation.resume(returning: outcome)
        }
    }

    /// Under load, gives the writers just answered a moment to send their next writes, so that
    /// they share the next sync instead of trickling into many small ones.
    ///
    /// Waits only while some writes are queued but fewer than the last batch had: a lone writer
    /// never waits. With a sync running, waits at most until it ends (the batch could not be
    /// written before then anyway); with none, at most `stragglerWait`. A sync costs about the same
    /// for one line as for a hundred, so fuller batches are what make throughput.
    private func gatherStragglers(expecting expected: Int, whileSyncing sync: SyncTicket?) {
        guard expected > 1 else { return }
        let deadline = ContinuousClock.now + Self.stragglerWait
        while sync.map({ !$0.isDone.load(ordering: .acquiring) }) ?? (ContinuousClock.now < deadline) {
            let queued = queue.withLock { $0.waiting.count }
            if queued >= expected || (queued == 0 && sync == nil) { return }
            usleep(20)
        }
    }

    /// The longest a batch waits for more writers: far below a sync's own cost.
    static let stragglerWait = Duration.microseconds(200)
}
