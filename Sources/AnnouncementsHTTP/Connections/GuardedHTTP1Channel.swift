import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 child channel with this server's limits: at most `maxConnections` open
/// (past it a new connection is answered 503 and closed, and the event loop never waits on a
/// descriptor it cannot get), each held to its timeouts by a `ConnectionGuard`, with bounded
/// request heads.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    let connections: ConnectionCount
    /// Counts the connections cut off, when there are metrics.
    let metrics: ServerMetrics?
    /// The 503 that answers a connection past the limit.
    private let refusal: ByteBuffer

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ConnectionLimits, connections: ConnectionCount, metrics: ServerMetrics? = nil) {
        self.responder = responder
        self.limits = limits
        self.connections = connections
        self.metrics = metrics
        let message = "the server has as many connections open as it allows (http.max_connections: \(limits.maxConnections)); retry shortly"
        refusal = RefusedConnection.response(APIError(.serviceUnavailable, message))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard connections.open() else { return refuse(channel, logger: logger) }
        channel.closeFuture.whenComplete { [connections] _ in connections.close() }
        return channel.eventLoop.makeCompletedFuture {
            let connection = ConnectionGuard(limits: limits, logger: logger, metrics: metrics)
            let pipeline = channel.pipeline.syncOperations
            try pipeline.addHandler(RequestBytesObserver(connection))
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = ConnectionLimits.maxHeaderFieldBytes
            decoderLimits.maxHeaderListSize = ConnectionLimits.maxHeadBytes
            decoderLimits.maxHeaderFieldCount = ConnectionLimits.maxHeaderFields
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,  // NIOAsyncChannel reads one request at a time
                withErrorHandling: false,  // ConnectionGuard answers parser errors
                withOutboundHeaderValidation: false,  // HTTP types validate headers already
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: decoderLimits
            )
            try pipeline.addHandler(connection)
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }

    /// Answers a connection past the limit with a 503 (see `RefusedConnection`). While too many
    /// refusals are under way, the connection is dropped (closed) instead.
    private func refuse(_ channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        metrics?.connectionCut(.overLimit)
        if let count = connections.reportRefusal() {
            let line = RefusalReport.warning(count: count, limit: limits.maxConnections, address: AccessLog.address(channel.remoteAddress))
            logger.warning(line.message, metadata: line.metadata)
        }
        guard connections.refusing() else { return channel.eventLoop.makeFailedFuture(ConnectionCount.Refused()) }
        channel.closeFuture.whenComplete { [connections] _ in connections.refused() }
        return channel.eventLoop.makeCompletedFuture { [refusal] in
            try channel.pipeline.syncOperations.addHandler(RefusedConnection(answer: refusal))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }
}
