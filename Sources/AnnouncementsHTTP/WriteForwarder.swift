import AnnouncementsStore
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Sends a write that reaches a node of a shared log without the writer role to the node that
/// holds it (`EventStore.writeHolder`), and answers with that node's answer: the writes of every
/// node then go into the holder's commits, and the role stays where it is, rather than moving to
/// each node that has a write (a move costs a wait in the lock's queue and a read of the lines).
///
/// The write goes as it came (the writer's token, `If-Match`, the body), marked as forwarded (a
/// node never sends on a write it was sent), and always with an `Idempotency-Key`: the client's,
/// or one made here. So when the holder does not answer within `answerLimit` (stopped, frozen,
/// cut off) or answers 503 (it lost the role, or cannot write), the write is made here as any
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
    /// The request fields that do not go on: the connection's own, and `Accept-Encoding` (this
    /// node compresses its answer as it would its own).
    static let notForwarded: Set<HTTPField.Name> = [
        .connection, .contentLength, .transferEncoding, .acceptEncoding, .te, .upgrade,
        .proxyAuthorization, HTTPField.Name("Keep-Alive")!, .expect, forwardedField, .requestID,
    ]
    /// The answer's fields that come back: what the API's write answers carry.
    static let passedBack: Set<HTTPField.Name> = [
        .contentType, .eTag, .location, .retryAfter, .wwwAuthenticate, .allow, .logSeq, .cacheControl, .vary,
    ]
    /// The most of an answer's body read back: a write answers with one announcement.
    static let answerBytes = 64 << 20

    /// The HTTP client: made at the first write sent on (a server that never runs makes none, and
    /// has none to shut down), shut down with the server.
    private enum Client {
        case none
        case running(HTTPClient)
        case shutDown
    }

    let store: EventStore
    let maxRequestBytes: Int
    private let client = Mutex(Client.none)

    init(store: EventStore, maxRequestBytes: Int) {
        self.store = store
        self.maxRequestBytes = maxRequestBytes
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
                    timeout: .init(connect: .seconds(1), read: .seconds(2)),
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
        guard request.headers[Self.forwardedField] == nil, let holder = store.writeHolder, let client = runningClient()
        else { return .makeHere(request, madeKey: nil) }
        let body = try await RequestBody.read(request, maxBytes: maxRequestBytes)
        var head = request.head
        let madeKey = head.headerFields[.idempotencyKey] == nil ? "forwarded-\(UUID().uuidString)" : nil
        if let madeKey { head.headerFields[.idempotencyKey] = madeKey }
        let request = Request(head: head, body: Hummingbird.RequestBody(buffer: body))
        var outgoing = HTTPClientRequest(url: holder + request.uri.path + (request.uri.query.map { "?" + $0 } ?? ""))
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers where !Self.notForwarded.contains(field.name) {
            outgoing.headers.add(name: field.name.rawName, value: field.value)
        }
        outgoing.headers.add(name: Self.forwardedField.rawName, value: "1")
        // The id this node gave the request (the client's, when acceptable): both access logs name it.
        if !context.requestID.isEmpty { outgoing.headers.add(name: HTTPField.Name.requestID.rawName, value: context.requestID) }
        if body.readableBytes > 0 { outgoing.body = .bytes(body) }
        let answer: HTTPClientResponse
        do {
            answer = try await client.execute(outgoing, timeout: Self.answerLimit)
        } catch {
            // Not answered (or not sent): made here, with its key, which finds the holder's commit
            // of it, if any.
            // Said once per holder (the writes in flight with it find it forgotten already).
            let forgotten = store.forgetWriteHolder(holder)
            context.logger.log(
                level: forgotten ? .warning : .debug,
                "the writer role's holder did not answer a forwarded write: making it here, and the writes after it until another node's append names a holder",
                metadata: ["holder": "\(holder)", "error": "\(error)"]
            )
            return .makeHere(request, madeKey: madeKey)
        }
        guard answer.status != .serviceUnavailable else {
            context.logger.info("the writer role's holder could not make a forwarded write: making it here", metadata: ["holder": "\(holder)"])
            return .makeHere(request, madeKey: madeKey)
        }
        let bytes: ByteBuffer
        do {
            bytes = try await answer.body.collect(upTo: Self.answerBytes)
        } catch {
            context.logger.warning("the writer role's holder's answer to a forwarded write was cut off: making it here", metadata: [
                "holder": "\(holder)", "error": "\(error)",
            ])
            return .makeHere(request, madeKey: madeKey)
        }
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            guard let name = HTTPField.Name(name), Self.passedBack.contains(name) else { continue }
            headers.append(HTTPField(name: name, value: value))
        }
        if let madeKey { headers[.idempotencyKey] = madeKey }
        if (200..<300).contains(answer.status.code), let seq = headers[.logSeq].flatMap({ Int($0) }) {
            _ = await store.waitUntilSeq(seq, upTo: Self.catchUpLimit, asking: false)
        }
        return .answered(Response(status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: bytes)))
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
