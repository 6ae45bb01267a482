/// What the server allows each connection: how long it may idle or take to send a request, how
/// many may be open at once, and how long a graceful stop waits for them.
public struct ConnectionLimits: Sendable, Hashable {
    /// How long a keep-alive connection may wait for its next request, and how long a client may
    /// leave what it is sent unread (an event stream it stopped reading) before it is closed.
    public var idleTimeout: Duration
    /// How long a client may take to send one request, from its first byte to the end of its body.
    public var readTimeout: Duration
    /// The most connections open at once; past it a new one is answered 503 and closed.
    public var maxConnections: Int
    /// How long a graceful stop lets requests in flight finish before it closes their connections.
    public var shutdownGrace: Duration

    public init(
        idleTimeout: Duration = .seconds(60),
        readTimeout: Duration = .seconds(30),
        maxConnections: Int = 1_000,
        shutdownGrace: Duration = .seconds(10)
    ) {
        self.idleTimeout = idleTimeout
        self.readTimeout = readTimeout
        self.maxConnections = maxConnections
        self.shutdownGrace = shutdownGrace
    }

    /// The largest request line (method, target and version) or header field, in bytes.
    static let maxHeaderFieldBytes = 16 * 1024
    /// The largest request head (request line and every header field), in bytes.
    static let maxHeadBytes = 64 * 1024
    /// The most header fields in one request.
    static let maxHeaderFields = 100
}
