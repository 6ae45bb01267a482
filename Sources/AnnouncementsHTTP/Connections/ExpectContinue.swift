import NIOCore
import NIOHTTP1

/// Answers `Expect: 100-continue` (RFC 9110 10.1.1: a server MUST send a final status or `100
/// Continue` at once). A client that asks holds the body until it hears one, or until a wait of
/// its own (curl's: a second; curl asks for bodies past 1 MiB, as many HTTP libraries do for
/// any). Sent as the head arrives, ahead of the connection's guard (it is not the request's
/// answer): a request refused before its body is read (a 401, a 413) is answered as any other,
/// its body, if sent, read and dropped as any other's. An HTTP/1.0 request's expectation is
/// ignored, as the RFC says.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), head.version == .http1_1,
           head.headers["expect"].contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue" }) {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
