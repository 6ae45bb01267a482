import Logging
import NIOCore
import NIOHTTP1

/// Holds one connection to its `ConnectionLimits` (see `ConnectionClock`), closes HTTP/1.0
/// connections that did not ask to stay open once answered, and answers requests the HTTP parser
/// rejects with a JSON error and the right status. Sits between the HTTP/1 codec and the
/// conversion to HTTP types, where each request's version is still known.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What an unanswered request asked of its response: its version, and whether the connection
    /// stays open after it.
    private struct Owed {
        var version: HTTPVersion
        var keepAlive: Bool
    }

    private var clock: ConnectionClock
    private var owed: [Owed] = []
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
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
        switch unwrapInboundIn(data) {
        case .head(let head):
            clock.requestBegan(at: .now())
            owed.append(Owed(version: head.version, keepAlive: head.isKeepAlive))
        case .body:
            break
        case .end:
            clock.requestEnded(at: .now())
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // The parser cannot go on: answer when nothing else is being answered, then close. The
        // error goes no further, so nothing else answers it. On a connection already closed (cut
        // off mid-head by a timeout, or left by its client) the parser only saw the head end
        // early: nothing to answer, and no bad request to count.
        guard context.channel.isActive else { return }
        guard owed.isEmpty else {
            context.close(promise: nil)
            return
        }
        metrics?.connectionCut(.badRequest)
        let rejection = Self.rejection(error, requestLineLength: requestLineLength)
        let body = ByteBuffer(bytes: rejection.jsonBody)
        let headers = HTTPHeaders([
            ("Content-Type", "application/json;charset=UTF-8"),
            ("Content-Length", String(body.readableBytes)),
            ("Connection", "close"),
        ])
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
            APIError(.badRequest, "the request is not valid HTTP/1.1 (\(error)); the connection is closed")
        }
    }

    // MARK: - Responses

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            // Answer in the request's version (an HTTP/1.0 client cannot read chunked bodies), and
            // say that the connection closes when the client did not ask to keep it. Most heads
            // need neither and pass on as they are.
            guard let request = owed.first, request.version != head.version || !request.keepAlive else {
                context.write(data, promise: promise)
                return
            }
            head.version = request.version
            if !request.keepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            clock.responseEnded(at: .now())
            let closes = owed.first.map { !$0.keepAlive } ?? false
            if !owed.isEmpty { owed.removeFirst() }
            schedule(context)
            guard closes else {
                context.write(data, promise: promise)
                return
            }
            let written = context.writeAndFlush(data)
            written.cascade(to: promise)
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        clock.writabilityChanged(isWritable: context.channel.isWritable, at: .now())
        schedule(context)
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            clock.stopping(at: .now())
            schedule(context)
        }
        context.fireUserInboundEventTriggered(event)
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
