import Hummingbird
import NIOCore

/// The context of each request: Hummingbird's, and the client's address for the access log.
public struct AnnouncementsRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer (nil when a test drives the router without one).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
