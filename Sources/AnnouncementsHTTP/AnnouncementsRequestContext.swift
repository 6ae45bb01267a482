import Hummingbird
import NIOCore

/// The context of each request: Hummingbird's, the client's address and the request's id for
/// the access log.
public struct AnnouncementsRequestContext: RequestContext, RemoteAddressRequestContext, RequestIDRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer (nil when a test drives the router without one).
    public let remoteAddress: SocketAddress?
    /// The request's id (`X-Request-ID`), once `RequestLogMiddleware` has given it one.
    public internal(set) var requestID = ""
    /// Completed when the connection closes: what an event stream watches for its client leaving.
    let connectionClosed: EventLoopFuture<Void>?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        connectionClosed = source.channel.closeFuture
    }
}

/// A context that carries the request's id, for what a route sends on (a forwarded write keeps
/// the id it came with, so that both nodes' access logs name it alike).
protocol RequestIDRequestContext: RequestContext {
    var requestID: String { get set }
}
