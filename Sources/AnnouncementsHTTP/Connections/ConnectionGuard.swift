import AnnouncementsDomain
import Logging
import NIOCore
import NIOHTTP1

/// Holds one connection to its `ConnectionLimits` (see `ConnectionClock`), answers each request in
/// its version saying whether the connection stays open, and answers requests the HTTP parser
/// rejects with a JSON error and the right status, then closes (see `ConnectionExchanges`). Sits
/// between the HTTP/1 codec and the conversion to HTTP types, where each request's version is
/// still known.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private var clock: ConnectionClock
    private var exchanges = ConnectionExchanges()
    /// The answer to the parse failure, once there was one.
    private var rejection: APIError?
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    /// The bytes of the responses' bodies handed to SwiftNIO so far: less those it still holds
    /// (`outputWaiting`), what has left (how a slow reader is told from one that stopped reading).
    private var handedOver = 0
    /// How long the request line of the request being read is so far, and whether it has ended:
    /// a head too large with a request line past the field limit is a URI too long (414), any
    /// other, header fields too large (431).
    private var requestLineLength = 0
    private var requestLineEnded = false
    private let logger: Logger
    private let metrics: ServerMetrics?

    init(limits: ConnectionLimits, logger: Logger, metrics: ServerMetrics? = nil) {
        self.metrics = metrics
        self.clock = ConnectionClock(limits: limits, openedAt: .now())
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        schedule(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    /// Raw bytes arrived, before the HTTP parser reads them (`RequestBytesObserver`).
    func bytesArrived(_ bytes: ByteBuffer) {
        if clock.readingSince == nil {
            clock.bytesArrived(at: .now())
            requestLineLength = 0
            requestLineEnded = false
            if let context { schedule(context) }
        }
        if !requestLineEnded {
            let view = bytes.readableBytesView
            if let newline = view.firstIndex(of: UInt8(ascii: "\n")) {
                requestLineLength += newline - view.startIndex
                requestLineEnded = true
            } else {
                requestLineLength += view.count
            }
        }
    }

    // MARK: - Requests

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Once the parser failed, nothing it passes on is a request.
        guard !exchanges.parserFailed else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // RFC 9112 3.2: an HTTP/1.1 request without a Host field, or with more than one, is a
            // 400. Refused as a request the parser refused: after the answers owed before it, and
            // nothing of it (its body) is read as a request.
            if let rejection = Self.refusal(of: head) {
                fail(rejection, cause: rejection, context: context)
                return
            }
            clock.requestBegan(at: .now())
            exchanges.requestHead(version: head.version, keepAlive: head.isKeepAlive, isHead: head.method == .HEAD)
            if Self.expectsContinue(head), exchanges.expectsContinue(version: head.version) {
                writeContinue(head.version, context: context)
            }
        case .body:
            break
        case .end:
            clock.requestEnded(at: .now())
            exchanges.requestEnd()
        }
        context.fireChannelRead(data)
    }

    /// Why a request head the parser took is refused here, or nil:
    /// - an HTTP/1.1 request without exactly one Host field, or a Host that is not `host[:port]`
    ///   (RFC 9112 3.2: a 400);
    /// - `CONNECT`, which asks a proxy for a tunnel: this server is none (a 501). SwiftNIO's parser
    ///   reads nothing after it (the rest would be the tunnel's) and frames its answer without a
    ///   body, so the connection would wait, answered, for its idle timeout: it is closed instead.
    static func refusal(of head: HTTPRequestHead) -> APIError? {
        if head.method == .CONNECT {
            return APIError(.notImplemented, "this server is not a proxy: it takes no CONNECT; the connection is closed")
        }
        let hosts = head.headers["host"]
        if head.version == .http1_1, hosts.count != 1 {
            return APIError(.badRequest, "an HTTP/1.1 request must have exactly one Host field (RFC 9112 3.2); this one had \(hosts.count); the connection is closed")
        }
        if let host = hosts.first, !isHostValue(host) {
            return APIError(.badRequest, "the Host field must be one host, with its port or not (RFC 9112 3.2), not \"\(VisibleText.escaped(host))\"; the connection is closed")
        }
        return nil
    }

    /// Whether `value` may be a Host field's value: the characters of a host (a name, an IPv4
    /// address or a bracketed IPv6 one: RFC 3986's unreserved, percent-encoded and sub-delims
    /// characters, and `[`, `]`, `:`) and of its port. Spaces, a second host after a comma and
    /// a space, a path or user info are not.
    static func isHostValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: Self.hostPunctuation.contains(byte)
            }
        }
    }

    private static let hostPunctuation = Set("-._~%!$&'()*+,;=[]:".utf8)

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // On a connection already closed (cut off by a timeout, or left by its client) the parser
        // only saw the bytes end early: nothing to answer, and no bad request to count. But a
        // request whose body was being read must fail, not end: Hummingbird takes a stream that
        // ends for the body's end, and a body cut short would be used as whole (a chunked POST
        // whose first chunk was a whole announcement was written).
        guard context.channel.isActive else {
            if exchanges.readingBody { context.fireErrorCaught(error) }
            return
        }
        fail(Self.rejection(error, requestLineLength: requestLineLength), cause: error, context: context)
    }

    /// Answers what the parser refused (or a head this handler refuses) with `rejection`, after
    /// the answers owed before it, and closes the connection (see `ConnectionExchanges`). `cause`
    /// is what the request whose body is being read fails with.
    private func fail(_ rejection: APIError, cause: any Error, context: ChannelHandlerContext) {
        switch exchanges.parserFailure() {
        case .ignore:
            return
        case .answerNow:
            metrics?.connectionCut(.badRequest)
            logRefusal(rejection, context: context)
            reject(rejection, context: context)
        case .failRequest:
            // The request's handler reads the error where it reads the body (a 400, nothing of the
            // request written); its answer closes the connection. (Only the parser fails a body:
            // a refused head comes after the request before it has ended.)
            metrics?.connectionCut(.badRequest)
            context.fireErrorCaught(cause)
        case .answerAfterOwed:
            metrics?.connectionCut(.badRequest)
            logRefusal(rejection, context: context)
            self.rejection = rejection
        }
    }

    /// The access log's line for a request refused before it could be read: it has no method,
    /// path or request id the server took in. (One the parser fails in its body is answered by
    /// its handler, and logged as any request.)
    private func logRefusal(_ rejection: APIError, context: ChannelHandlerContext) {
        guard logger.logLevel <= .info else { return }
        logger.info("refused a request it could not read: \(rejection.status.code) (\(rejection.message))", metadata: [
            "client.address": "\(AccessLog.address(context.channel.remoteAddress))",
            "http.status": "\(rejection.status.code)",
        ])
    }

    /// Writes `rejection` as a whole response that closes the connection, then closes it.
    private func reject(_ rejection: APIError, context: ChannelHandlerContext) {
        let body = ByteBuffer(bytes: rejection.jsonBody)
        let headers = HTTPHeaders([
            ("Content-Type", "application/json;charset=UTF-8"),
            ("Content-Length", String(body.readableBytes)),
            ("Cache-Control", "no-store"),
        ] + SecurityHeaders.pairs + [("Connection", "close")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: rejection.status.code), headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    /// The answer to a request the parser refused.
    static func rejection(_ error: HTTPParserError, requestLineLength: Int) -> APIError {
        switch error {
        case .headerOverflow where requestLineLength > ConnectionLimits.maxHeaderFieldBytes:
            APIError(.uriTooLong, "the request's URI is longer than the \(ConnectionLimits.maxHeaderFieldBytes) bytes this server reads")
        case .headerOverflow:
            APIError(.requestHeaderFieldsTooLarge, "the request's header fields are too large: at most \(ConnectionLimits.maxHeaderFields) fields, each at most \(ConnectionLimits.maxHeaderFieldBytes) bytes, \(ConnectionLimits.maxHeadBytes) bytes in all")
        default:
            APIError(.badRequest, "the request is not valid HTTP/1.1 (\(error.inWords)); the connection is closed")
        }
    }


    // MARK: - Responses

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            let hasLength = head.headers.contains(name: "content-length")
            switch exchanges.responseHead(status: Int(head.status.code), hasLength: hasLength) {
            case .drop:
                promise?.fail(ChannelError.ioOnClosedChannel)
            case .send(let version, let connection):
                // Most heads need no change and pass on as they are.
                guard version != head.version || connection != nil else {
                    context.write(data, promise: promise)
                    return
                }
                head.version = version
                if let connection { head.headers.replaceOrAdd(name: "Connection", value: connection) }
                context.write(wrapOutboundOut(.head(head)), promise: promise)
            }
        case .body(let body):
            // A dropped response's body goes with it.
            guard !exchanges.parserFailed || !exchanges.owed.isEmpty else {
                promise?.fail(ChannelError.ioOnClosedChannel)
                return
            }
            handedOver += body.readableBytes
            context.write(data, promise: promise)
        case .end:
            let next = exchanges.responseEnd()
            if next != .drop {
                clock.responseEnded(at: .now())
                schedule(context)
            }
            switch next {
            case .drop:
                promise?.fail(ChannelError.ioOnClosedChannel)
            case .keepOpen:
                context.write(data, promise: promise)
                if let version = exchanges.continueDue() { writeContinue(version, context: context) }
            case .close:
                let written = context.writeAndFlush(data)
                written.cascade(to: promise)
                written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            case .answerThenClose:
                context.write(data, promise: promise)
                if let rejection { reject(rejection, context: context) } else { context.close(promise: nil) }
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        clock.writabilityChanged(isWritable: context.channel.isWritable, sent: handedOver - Self.outputWaiting(context), at: .now())
        schedule(context)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            clock.stopping(at: .now())
            schedule(context)
        }
        if let event = event as? ChannelEvent, event == .inputClosed, exchanges.closesOnInputClosed() {
            logger.debug("closing a connection", metadata: ["connection.reason": "its client left a stream"])
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Writes `100 Continue`: not a request's answer, an interim head, sent past this handler's
    /// own `write`.
    private func writeContinue(_ version: HTTPVersion, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .continue))), promise: nil)
    }

    /// The bytes written to the channel and not yet taken by the kernel (0 where it cannot say).
    /// What the kernel holds it sends after a close too; what SwiftNIO holds, a close drops.
    private static func outputWaiting(_ context: ChannelHandlerContext) -> Int {
        (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
    }

    /// Whether `head` says `Expect: 100-continue` (RFC 9110 10.1.1: a client that does holds its
    /// body until it hears `100 Continue` or a final status, or a wait of its own passes: curl's
    /// is a second, for bodies past 1 MiB). A request refused before its body is read (a 401, a
    /// 413) is answered as any other, its body, if sent, read and dropped as any other's.
    static func expectsContinue(_ head: HTTPRequestHead) -> Bool {
        head.headers["expect"].contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue" }
    }

    // MARK: - The timer

    /// Arms the timer for the clock's next deadline unless it is armed for an earlier moment
    /// (it then checks again when it fires): one timer per connection, rarely moved.
    private func schedule(_ context: ChannelHandlerContext) {
        guard let deadline = clock.deadline else { return }
        if timer != nil, let timerDeadline, timerDeadline <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            timerDeadline = nil
            if let expiry = clock.expiry(at: .now()) {
                // A client that reads, however slowly, has not left its response unread; one
                // whose response is still on its way is not idle.
                if expiry == .unread || expiry == .idle {
                    let unsent = Self.outputWaiting(context)
                    if clock.outputLooked(unsent: unsent, sent: handedOver - unsent, at: .now()) {
                        schedule(context)
                        return
                    }
                }
                logger.debug("closing a connection", metadata: ["connection.reason": "\(expiry)"])
                metrics?.connectionCut(expiry.cut)
                context.close(promise: nil)
            } else {
                schedule(context)
            }
        }
    }
}

/// Tells `ConnectionGuard` when bytes arrive, before the HTTP parser reads them, so that a
/// request's read time starts with its first byte (a slow head is timed too).
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let connection: ConnectionGuard

    init(_ connection: ConnectionGuard) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connection.bytesArrived(unwrapInboundIn(data))
        context.fireChannelRead(data)
    }
}

extension ConnectionClock.Expiry {
    /// The metrics' name for it.
    var cut: ServerMetrics.ConnectionCut {
        switch self {
        case .idle: .idleTimeout
        case .read: .readTimeout
        case .unread: .unread
        case .shutdown: .shutdown
        }
    }
}

extension HTTPParserError {
    /// What SwiftNIO's parser (llhttp) refused, in words (for a 400's message). Its `unknown` is
    /// several of llhttp's refusals, named by what usually causes them.
    var inWords: String {
        switch self {
        case .unexpectedContentLength, .unknown:
            "its framing: Content-Length with Transfer-Encoding (RFC 9112 6.3 allows one or the other), a Transfer-Encoding that does not end in chunked, or a line that does not end in CR LF"
        case .invalidContentLength: "its Content-Length: not one number, or sent with Transfer-Encoding (RFC 9112 6.3 allows one or the other)"
        case .invalidChunkSize: "a chunk size that is not a hexadecimal number"
        // (Also bytes that are no request at all: the parser cannot tell a method it does not
        // know from them, so this is a 400, not RFC 9110's 501. One it knows that no route
        // takes is a 405 with `Allow`.)
        case .invalidMethod: "its method: this server takes GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS"
        case .invalidURL: "its request target"
        case .invalidVersion: "its HTTP version"
        case .invalidHeaderToken: "a header field's name or value, which holds a character HTTP does not allow there"
        case .lfExpected, .invalidConstant: "a line that does not end in CR LF, or text where the request line or a field was due"
        default: "\(self)"
        }
    }
}
