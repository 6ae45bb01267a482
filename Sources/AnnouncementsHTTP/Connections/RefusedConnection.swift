import NIOCore

/// A connection past `max_connections`: answered with the error at once, in HTTP/1.1 and with
/// `Connection: close`, whatever it sends. Its output is closed after the answer and the rest of
/// it once the client closes its side or a second has passed, so that the client reads the answer
/// rather than a reset.
final class RefusedConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let answer: ByteBuffer
    private var closing: Scheduled<Void>?

    /// `answer`: the whole response, made once by `response(to:)` and shared by every refusal.
    init(answer: ByteBuffer) {
        self.answer = answer
    }

    /// `error` as a whole HTTP/1.1 response that closes its connection.
    static func response(_ error: APIError) -> ByteBuffer {
        let body = error.jsonBody
        var answer = ByteBuffer(string: "HTTP/1.1 \(error.status.code) \(error.status.reasonPhrase)\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: \(body.count)\r\nRetry-After: 1\r\nCache-Control: no-store\r\n\(SecurityHeaders.lines)Connection: close\r\n\r\n")
        answer.writeBytes(body)
        return answer
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(NIOAny(answer)).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
        closing = context.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { context.close(promise: nil) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closing?.cancel()
    }

    /// What the client sends is read and dropped: nothing answers it.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
