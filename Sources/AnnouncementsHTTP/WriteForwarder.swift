import AnnouncementsStore
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Sends a write that reaches a node of a shared log without the writer role to the node that
/// holds it (`EventStore.writeHolder`), and answers with that node's answer: the writes of every
/// node then go into the holder's commits, and the role stays where it is, rather than moving to
/// each node that has a write (a move costs a wait in the lock's queue and a read of the lines).
///
/// The write goes as it came (the writer's token, `If-Match`, the body), with the others that came
/// while this node's requests to the holder were out (`ForwardBatcher`), in one request
/// (`ForwardedWrites`; the holder's `ForwardedWritesRoute` marks each as forwarded: a node never
/// sends on a write it was sent), and always with an `Idempotency-Key`: the client's, or one made
/// here. So when the holder does not answer within `answerLimit` (stopped, frozen, cut off) or
/// answers 503 (it lost the role, or cannot write), the write is made here as any
/// write (taking the role, which a holder that makes no progress loses; see README "Several
/// nodes"), and if the holder did commit it, the key finds that commit and answers with its
/// outcome: nothing is written twice. A key made here comes back in the answer's `Idempotency-Key`,
/// for the client to send again with a retry. A 2xx answer is passed on once this node has the
/// write too (its `Log-Seq`, waited for at most `catchUpLimit`), so that a read here that follows
/// it sees it. Erasures are never sent on (see `WriteRoutes`).
final class WriteForwarder: Sendable {
    /// How long a forwarded write waits for the holder's answer before it is made here.
    static let answerLimit = TimeAmount.seconds(2)
    /// How long a forwarded write's answer waits for this node to take in what it wrote.
    static let catchUpLimit = Duration.seconds(5)
    /// Marks a write a node sent on: the node it reaches makes it itself.
    static let forwardedField = HTTPField.Name("Announcements-Forwarded")!
    /// The fields of a request's connection, not of the request: neither end of a forwarded
    /// write takes them.
    static let connectionFields: Set<HTTPField.Name> = [
        .connection, .contentLength, .transferEncoding, .te, .upgrade, .proxyAuthorization, HTTPField.Name("Keep-Alive")!, .expect,
    ]
    /// The request fields that do not go on: the connection's own, `Accept-Encoding` (this node
    /// compresses its answer as it would its own), and the two this node sets.
    static let notForwarded = connectionFields.union([.acceptEncoding, forwardedField, .requestID])
    /// The answer's fields that come back: what the API's write answers carry (a 415's
    /// `Accept-Patch` and `Accept-Encoding` among them).
    static let passedBack: Set<HTTPField.Name> = [
        .contentType, .eTag, .location, .retryAfter, .wwwAuthenticate, .allow, .logSeq, .cacheControl, .vary, .acceptPatch, .acceptEncoding,
    ]
    /// The most of an answer's body read back: answers to at most `ForwardedWrites.maxItems`
    /// writes, each with one announcement.
    static let answerBytes = 64 << 20
    /// The most requests with writes out to the holder at once; the writes that come meanwhile
    /// wait for one to be answered, and go together.
    static let maxInFlight = 2

    /// The HTTP client: made at the first write sent on (a server that never runs makes none, and
    /// has none to shut down), shut down with the server.
    private enum Client {
        case none
        case running(HTTPClient)
        case shutDown
    }

    let store: EventStore
    let maxRequestBytes: Int
    /// How long a forwarded write waits: for the holder's answer, then for this node to take in
    /// what it wrote (`answerLimit` and `catchUpLimit`; longer in tests, whose in-process nodes a
    /// busy machine may leave unrun for seconds).
    struct Waits: Sendable {
        var answer = WriteForwarder.answerLimit
        var catchUp = WriteForwarder.catchUpLimit
    }

    let waits: Waits
    private let client = Mutex(Client.none)
    /// Which writes go in which request to the holder.
    private let batcher: Mutex<ForwardBatcher<Pending>>
    /// The holder that refused the last request with writes, if it did: said once.
    private let refusedBy = Mutex<String?>(nil)

    init(store: EventStore, maxRequestBytes: Int, waits: Waits = Waits()) {
        self.store = store
        self.maxRequestBytes = maxRequestBytes
        self.waits = waits
        batcher = Mutex(ForwardBatcher(maxInFlight: Self.maxInFlight, maxItems: ForwardedWrites.maxItems, maxBytes: ForwardedWrites.batchBytes(maxRequestBytes: maxRequestBytes)))
    }

    /// The client, made when there is none; nil once shut down (writes are then made here).
    private func runningClient() -> HTTPClient? {
        client.withLock { client in
            switch client {
            case .running(let running):
                return running
            case .shutDown:
                return nil
            case .none:
                var configuration = HTTPClient.Configuration(
                    timeout: .init(connect: .seconds(1), read: waits.answer),
                    connectionPool: .init(idleTimeout: .seconds(20), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
                )
                configuration.decompression = .disabled
                configuration.httpVersion = .http1Only
                configuration.redirectConfiguration = .disallow
                let running = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                client = .running(running)
                return running
            }
        }
    }

    /// Shuts the client down; writes that come after are made here.
    func shutdown() async {
        let running = client.withLock { client -> HTTPClient? in
            defer { client = .shutDown }
            if case .running(let running) = client { return running }
            return nil
        }
        try? await running?.shutdown()
    }

    /// What became of a write: the holder's answer, or the request to make here (its body read),
    /// with the key made for it when it came without one.
    enum Outcome {
        case answered(Response)
        case makeHere(Request, madeKey: String?)
    }

    /// Sends `request` to the holder, unless no other node holds the role (or none is known), or
    /// the request was sent on by another node;
    /// made here too when the holder does not answer in time or answers 503.
    func forward(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Outcome {
        guard request.headers[Self.forwardedField] == nil, store.writeHolder != nil else { return .makeHere(request, madeKey: nil) }
        let body = try await RequestBody.read(request, maxBytes: maxRequestBytes)
        // A write that needs a body and came without one, or any length (411), is refused here:
        // the holder, which is given the write with its length, could only call it empty (400).
        // (Its body is read: the request goes on with what was read.)
        if body.readableBytes == 0, request.method != .delete, request.headers[.contentLength] == nil, request.headers[.transferEncoding] == nil {
            return .makeHere(Request(head: request.head, body: Hummingbird.RequestBody(buffer: body)), madeKey: nil)
        }
        var head = request.head
        let madeKey = head.headerFields[.idempotencyKey] == nil ? "forwarded-\(UUID().uuidString)" : nil
        if let madeKey { head.headerFields[.idempotencyKey] = madeKey }
        let request = Request(head: head, body: Hummingbird.RequestBody(buffer: body))
        var fields = HTTPFields()
        for field in request.headers where !Self.notForwarded.contains(field.name) { fields.append(field) }
        // The id this node gave the request (the client's, when acceptable): both access logs name it.
        if !context.requestID.isEmpty { fields[.requestID] = context.requestID }
        let path = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        let write = ForwardedWrites.Write(method: request.method, path: path, fields: fields, body: body)
        guard case .answered(let answer) = await exchange(write, logger: context.logger) else {
            // Not answered (or not sent): made here, with its key, which finds the holder's commit
            // of it, if any.
            return .makeHere(request, madeKey: madeKey)
        }
        guard answer.status != .serviceUnavailable else {
            context.logger.info("the writer role's holder could not make a forwarded write: making it here", metadata: ["holder": "\(store.writeHolder ?? "none")"])
            return .makeHere(request, madeKey: madeKey)
        }
        var headers = HTTPFields()
        for field in answer.fields where Self.passedBack.contains(field.name) { headers.append(field) }
        if let madeKey { headers[.idempotencyKey] = madeKey }
        if (200..<300).contains(answer.status.code) {
            store.writeCommittedByHolder()
            if let seq = headers[.logSeq].flatMap({ Int($0) }) { _ = await store.waitUntilSeq(seq, upTo: waits.catchUp, asking: false) }
        }
        return .answered(Response(status: answer.status, headers: headers, body: .init(byteBuffer: answer.body)))
    }

    // MARK: - Requests to the holder

    /// The writes waiting for a request to the holder (while `maxInFlight` are out).
    var waitingWrites: Int { batcher.withLock { $0.waiting.count } }

    /// A write waiting for its request's answer.
    private struct Pending: Sendable {
        let write: ForwardedWrites.Write
        let answer: ForwardedAnswer
        let logger: Logger
    }

    /// The holder's answer to one write, or that none came.
    enum Exchange: Sendable {
        case answered(ForwardedWrites.Answer)
        case notAnswered
    }

    /// `write`'s answer from the holder: sent at once, or with the writes that come while
    /// `maxInFlight` requests are out (`ForwardBatcher`).
    private func exchange(_ write: ForwardedWrites.Write, logger: Logger) async -> Exchange {
        let answer = ForwardedAnswer()
        if case .send(let batch) = batcher.withLock({ $0.add(Pending(write: write, answer: answer, logger: logger), bytes: write.encodedBytes) }) {
            // This write is in it: its own task sends it.
            await send(batch)
        }
        return await answer.value()
    }

    /// Sends `batch` to the holder and hands each write its answer; then the next batch, if
    /// writes came meanwhile, goes in a task of its own (the writes' own tasks wait for answers).
    private func send(_ batch: [Pending]) async {
        let answers = await answers(to: batch)
        for (pending, answer) in zip(batch, answers) { pending.answer.resolve(answer) }
        if case .send(let next) = batcher.withLock({ $0.answered() }) {
            Task { await self.send(next) }
        }
    }

    /// The holder's answers to `batch`, one for each of its writes.
    private func answers(to batch: [Pending]) async -> [Exchange] {
        let notAnswered = [Exchange](repeating: .notAnswered, count: batch.count)
        guard let first = batch.first, let holder = store.writeHolder, let client = runningClient() else { return notAnswered }
        var outgoing = HTTPClientRequest(url: holder + ForwardedWrites.path)
        outgoing.method = .POST
        outgoing.headers.add(name: "Content-Type", value: ForwardedWrites.contentType)
        // A writer's token: the holder reads no writes from a caller without one.
        if let token = first.write.fields[.authorization] { outgoing.headers.add(name: "Authorization", value: token) }
        outgoing.body = .bytes(ForwardedWrites.encode(batch.map(\.write)))
        let answer: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            answer = try await client.execute(outgoing, timeout: waits.answer)
            bytes = try await answer.body.collect(upTo: Self.answerBytes)
        } catch {
            // Said once per holder (the writes in flight with it find it forgotten already).
            let forgotten = store.forgetWriteHolder(holder)
            first.logger.log(
                level: forgotten ? .warning : .debug,
                "the writer role's holder did not answer forwarded writes: making them here, and the writes after them until another node's append names a holder",
                metadata: ["holder": "\(holder)", "writes": "\(batch.count)", "error": "\(error)"]
            )
            return notAnswered
        }
        guard answer.status == .ok else {
            // A node of a version without the route (404, through a rolling upgrade: every batch
            // until it is upgraded), or a refusal of the request as a whole: said once a holder.
            let isNew = refusedBy.withLock { refusedBy in
                defer { refusedBy = holder }
                return refusedBy != holder
            }
            first.logger.log(level: isNew ? .warning : .debug, "the writer role's holder refused forwarded writes: making them here", metadata: [
                "holder": "\(holder)", "status": "\(answer.status.code)", "answer": "\(String(buffer: bytes).prefix(200))",
            ])
            return notAnswered
        }
        refusedBy.withLock { $0 = nil }
        do {
            let answers = try ForwardedWrites.answers(in: bytes)
            guard answers.count == batch.count else {
                throw ForwardedWrites.Malformed(description: "\(answers.count) answers to \(batch.count) writes")
            }
            return answers.map(Exchange.answered)
        } catch {
            first.logger.error("the writer role's holder's answer to forwarded writes cannot be read: making them here", metadata: [
                "holder": "\(holder)", "error": "\(error)",
            ])
            return notAnswered
        }
    }
}

/// One write's answer from the holder: resolved once, by the task that sent its request, and
/// waited for by the write's own task.
private final class ForwardedAnswer: Sendable {
    private enum State {
        case waiting
        case waiter(CheckedContinuation<WriteForwarder.Exchange, Never>)
        case resolved(WriteForwarder.Exchange)
    }

    private let state = Mutex(State.waiting)

    func resolve(_ exchange: WriteForwarder.Exchange) {
        let waiter = state.withLock { state -> CheckedContinuation<WriteForwarder.Exchange, Never>? in
            defer { state = .resolved(exchange) }
            if case .waiter(let waiter) = state { return waiter }
            return nil
        }
        waiter?.resume(returning: exchange)
    }

    func value() async -> WriteForwarder.Exchange {
        await withCheckedContinuation { continuation in
            let resolved = state.withLock { state -> WriteForwarder.Exchange? in
                if case .resolved(let exchange) = state { return exchange }
                state = .waiter(continuation)
                return nil
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }
}

/// Shuts the forwarder's HTTP client down when the server stops.
struct WriteForwarderService: Service {
    let forwarder: WriteForwarder

    func run() async throws {
        try? await gracefulShutdown()
        await forwarder.shutdown()
    }
}
