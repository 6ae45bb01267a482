import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The feed behind one `events(after:)` sequence, read when its consumer asks for the next event
/// (so a consumer that falls behind holds back the server, not its memory): from the stream, or
/// a page at a time with `pollInterval`. Reconnects after a passing failure, as `events` says.
actor FeedReader {
    private let client: AnnouncementsClient
    private let idleTimeout: Duration
    private let pollInterval: Duration?
    private var reconnection: Reconnection
    /// The seq of the last event received (delivered, or waiting in `pending`).
    private var last: Int
    /// The seq of the last event delivered.
    private var delivered: Int
    /// The client's count of token changes when what `pending` and `stream` hold was asked for
    /// (`AnnouncementsClient.tokenAndChanges`).
    private var tokenChanges: Int
    /// Events received and not delivered yet, from `nextPending` on.
    private var pending: [FeedEvent] = []
    private var nextPending = 0
    /// Polling: the last page reached the end of the log; the next waits `pollInterval` first.
    private var caughtUp = false
    /// The open stream, and the parser of what it sent so far (without `pollInterval`).
    private var stream: FeedStream?
    /// The client's watch that closes `stream` when the token is set (its number).
    private var streamWatch: Int?
    private var parser = EventStreamParser()
    /// Whether the open stream is in the client's `statistics` as a request answered yet.
    private var streamCounted = false
    /// Whether the feed ended (cancelled, or with an error): every `next()` after is nil.
    private var ended = false
    /// Whether a `next()` is under way, and the calls waiting for it to end: one at a time, as
    /// the actor alone would not keep them (it runs another while one awaits the network).
    private var reading = false
    private var waitingToRead: [(id: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var lastWaiterID = 0

    init(client: AnnouncementsClient, after seq: Int, retryDelay: Duration, idleTimeout: Duration, pollInterval: Duration?) {
        self.client = client
        self.last = seq
        self.delivered = seq
        self.tokenChanges = client.tokenAndChanges.changes
        self.reconnection = Reconnection(delay: retryDelay)
        self.idleTimeout = idleTimeout
        self.pollInterval = pollInterval
    }

    deinit {
        stream?.close()
        if let streamWatch { client.unwatchToken(streamWatch) }
    }

    /// The next event; nil once the iterating task is cancelled, and after the feed ended. Throws
    /// the `ClientError` that ends the feed. Calls from several tasks take turns; one whose task
    /// is cancelled returns nil at once, whether it waits for its turn or has it, and the others
    /// go on (the stream is opened again from the last event received).
    func next() async throws(ClientError) -> FeedEvent? {
        while reading {
            lastWaiterID += 1
            let id = lastWaiterID
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if Task.isCancelled { continuation.resume() } else { waitingToRead.append((id, continuation)) }
                }
            } onCancel: {
                Task { await self.stopWaiting(id) }
            }
            if Task.isCancelled {
                // Given the turn as it was cancelled: pass it on.
                if !reading { passTurn() }
                return nil
            }
        }
        reading = true
        defer {
            reading = false
            passTurn()
        }
        while !ended {
            // Before what was received: a cancelled task gets no more of it (the next task does).
            guard !Task.isCancelled else {
                closeStream()
                return nil
            }
            if client.tokenAndChanges.changes != tokenChanges { forgetReceived() }
            if nextPending < pending.count {
                defer { nextPending += 1 }
                delivered = pending[nextPending].seq
                return pending[nextPending]
            }
            do {
                if let pollInterval {
                    try await readPage(every: pollInterval)
                } else {
                    try await readStream()
                }
            } catch let refusal as FeedRefusal {
                closeStream()
                guard AnnouncementsClient.isPassing(refusal.error, afterAStream: reconnection.hasOpened) else {
                    end()
                    throw refusal.error
                }
                // A cancelled task's request is not a failed attempt (the loop ends it).
                if !Task.isCancelled { try? await Task.sleep(for: reconnection.next(atLeast: refusal.retryAfter)) }
            } catch {
                end()
                // `readStream` throws a refusal or a `ClientError`; anything else would be a bug here.
                throw error as? ClientError ?? .badEventStream(detail: "the feed failed: \(error)")
            }
        }
        return nil
    }

    /// Wakes the call that has waited longest for its turn, if any.
    private func passTurn() {
        if !waitingToRead.isEmpty { waitingToRead.removeFirst().continuation.resume() }
    }

    /// The waiter `id`'s task was cancelled: it stops waiting for its turn.
    private func stopWaiting(_ id: Int) {
        guard let index = waitingToRead.firstIndex(where: { $0.id == id }) else { return }
        waitingToRead.remove(at: index).continuation.resume()
    }

    /// Ends the feed: its stream closed, nothing more read.
    private func end() {
        ended = true
        closeStream()
    }

    /// The token changed (a user signed out, or in as another): what was received under the old
    /// one is not delivered, and the stream it opened is closed. The feed goes on from the last
    /// event delivered, asked for with the new token.
    private func forgetReceived() {
        closeStream()
        pending.removeAll()
        nextPending = 0
        last = delivered
        caughtUp = false
        tokenChanges = client.tokenAndChanges.changes
    }

    /// Takes the events of a page or a chunk that come after the last one received, in order.
    private func take(_ events: [FeedEvent]) {
        pending.removeAll(keepingCapacity: true)
        nextPending = 0
        for event in events where event.seq > last {
            pending.append(event)
            last = event.seq
        }
    }

    /// Reads the next page of the feed; after one that reached the end of the log (empty, or
    /// ending at the `Log-Seq` it came with), waits `interval` first. Throws a `FeedRefusal` when
    /// the page fails.
    private func readPage(every interval: Duration) async throws {
        if caughtUp {
            try? await Task.sleep(for: max(interval, Reconnection.shortest))
            caughtUp = false
            if Task.isCancelled { return }
        }
        let received: AnnouncementsClient.Received
        let token = client.tokenAndChanges
        do throws(ClientError) {
            received = try await client.attempt(
                .get, path: "events", token: token.value, query: AnnouncementsClient.pageQuery(after: last, limit: AnnouncementsClient.pollPageSize),
                minSeq: last > 0 ? last : nil, accepting: [429, 503]
            )
        } catch {
            // A 409 naming the position (this server's log ends before it, and no other node
            // appends to it) is `positionBeyondLog`, as for a stream resumed there.
            throw FeedRefusal(error: error)
        }
        if received.status == 429 || received.status == 503 {
            let retryAfter = AnnouncementsClient.retryAfter(received.header("Retry-After"), atMost: EventStreamParser.longestRetry)
            throw FeedRefusal(error: ClientError(status: received.status, body: received.data), retryAfter: retryAfter)
        }
        let page: [FeedEvent]
        do throws(ClientError) {
            page = try FeedPage.events(in: received)
        } catch {
            throw FeedRefusal(error: error)
        }
        reconnection.received()
        reconnection.worked()
        // Asked for with this token (nothing of an older one is left: `pending` was read out); one
        // changed meanwhile drops the page at `next()`'s check.
        tokenChanges = token.changes
        take(page)
        // A page cut short (past the server's byte limit per page) is followed at once.
        caughtUp = pending.isEmpty || received.header("Log-Seq").flatMap(Int.init).map { last >= $0 } == true
    }

    /// Reads the next chunk of the stream, connecting first when none is open; a `retry:` sets the
    /// reconnection delay. When the server ends the stream, waits the delay (the next call
    /// connects again). Throws a `FeedRefusal`, or `badEventStream`.
    private func readStream() async throws {
        let stream = self.stream ?? connect()
        let received: Data?
        do {
            received = try await stream.next()
        } catch let refusal as FeedRefusal {
            // A refusal is a request answered too, as a page's is.
            if let bytes = refusal.answeredBytes { client.cache.count(bytes: bytes, notModified: false) }
            throw refusal
        }
        guard let chunk = received else {
            closeStream()
            // Ended by its reader's cancellation, or closed as the token was set (the loop connects
            // again with the new one at once): not a failed attempt.
            if !Task.isCancelled, client.tokenAndChanges.changes == tokenChanges { try? await Task.sleep(for: reconnection.next()) }
            return
        }
        reconnection.received()
        // In `statistics`, as the pages are: the stream a request answered, its bytes as they come.
        if streamCounted {
            client.cache.count(moreBytes: chunk.count)
        } else {
            client.cache.count(bytes: chunk.count, notModified: false)
            streamCounted = true
        }
        let before = last
        take(try parser.feed(chunk))
        // Only events make the connection one that worked: a stream that opens (its first comment)
        // and ends, again and again, is waited for longer each time.
        if last > before { reconnection.worked() }
        if let asked = parser.retry { reconnection.delay = min(asked, EventStreamParser.longestRetry) }
    }

    /// Opens the stream after the last event received.
    private func connect() -> FeedStream {
        let configuration = client.configuration
        var request = URLRequest(url: configuration.baseURL.appendingPathComponent("events"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue(configuration.version.rawValue, forHTTPHeaderField: "Accept-Version")
        request.setValue(String(last), forHTTPHeaderField: "Last-Event-ID")
        // Each event as it comes, not held back for a compressor's block (and on Linux, libcurl
        // would otherwise offer every coding it was built with).
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // A node behind the one that sent the last event waits for it (or answers 503, asked
        // again) rather than call the position one beyond its log.
        if last > 0 { request.setValue(String(last), forHTTPHeaderField: "Min-Seq") }
        // An auditor's (or an admin's) token gets the full lines; without one, the public form.
        let token = client.tokenAndChanges
        if let authorization = AnnouncementsClient.authorization(token.value) { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        tokenChanges = token.changes
        // Longer than the server's heartbeat (15 seconds by default), so an idle stream is not taken for a dead one.
        let idle = idleTimeout.components
        request.timeoutInterval = AnnouncementsClient.sessionInterval(max(configuration.timeout, Double(idle.seconds) + Double(idle.attoseconds) / 1e18))
        let stream = FeedStream(request, base: configuration.baseURL)
        self.stream = stream
        streamWatch = client.watchToken { [weak stream] in stream?.close() }
        // Set between reading the token and the watch: closed as the watch would have.
        if client.tokenAndChanges.changes != token.changes { stream.close() }
        parser = EventStreamParser()
        streamCounted = false
        return stream
    }

    private func closeStream() {
        stream?.close()
        stream = nil
        if let streamWatch { client.unwatchToken(streamWatch) }
        streamWatch = nil
    }

    /// The bytes received and not parsed yet (for tests).
    var bufferedBytes: Int { stream?.bufferedBytes ?? 0 }

    /// The stream open now, if any (for tests).
    var openStream: FeedStream? { stream }
}
