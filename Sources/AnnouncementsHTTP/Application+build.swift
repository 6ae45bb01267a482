import AnnouncementsDomain
import AnnouncementsStore
import Hummingbird
import HummingbirdCore
import Logging

/// What the HTTP layer needs to know: where to listen, and how to answer.
public struct ServerSettings: Sendable {
    public var host: String
    public var port: Int
    /// The version served to requests that name none.
    public var defaultVersion: APIVersion
    /// Who may read and write what.
    public var access: Access
    /// The largest request body accepted, in bytes.
    public var maxRequestBytes: Int
    /// The time between heartbeat comments on an idle event stream.
    public var feedHeartbeat: Duration
    /// Timeouts and the most connections open at once.
    public var connections: ConnectionLimits
    /// Which web pages may call the API.
    public var cors: CORSPolicy
    /// Where requests are counted and timed (swift-metrics); nil: they are not.
    public var metrics: ServerMetrics?
    /// `GET /metrics`, when served.
    public var metricsEndpoint: MetricsEndpoint?
    /// With a shared log: the address other nodes send their writes to while this one holds the
    /// writer role (`http://HOST:PORT`); nil: `http://` and the address it listens on, unless that
    /// is every interface (0.0.0.0, ::), which names no address to reach it at.
    public var advertise: String?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        defaultVersion: APIVersion = .v2,
        access: Access = Access([]),
        maxRequestBytes: Int = ServerSettings.requestLimit(forBodyBytes: ValidationRules.defaultMaxBodyBytes),
        feedHeartbeat: Duration = .seconds(15),
        connections: ConnectionLimits = ConnectionLimits(),
        cors: CORSPolicy = CORSPolicy(),
        metrics: ServerMetrics? = nil,
        metricsEndpoint: MetricsEndpoint? = nil,
        advertise: String? = nil
    ) {
        self.host = host
        self.port = port
        self.defaultVersion = defaultVersion
        self.access = access
        self.maxRequestBytes = maxRequestBytes
        self.feedHeartbeat = feedHeartbeat
        self.connections = connections
        self.cors = cors
        self.metrics = metrics
        self.metricsEndpoint = metricsEndpoint
        self.advertise = advertise
    }

    /// The address other nodes reach this one at, listening on `host` and `port`: `advertise`, or
    /// `http://HOST:PORT` when `host` names one interface.
    func advertised(host: String, port: Int) -> String? {
        if let advertise { return advertise }
        guard !["0.0.0.0", "::", "*", ""].contains(host) else { return nil }
        return Self.url(host: host, port: port)
    }

    /// `http://HOST:PORT`, an IPv6 address in brackets (`http://[::1]:8080`), as a URL has it.
    public static func url(host: String, port: Int) -> String {
        host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }

    /// The largest request that still lets through every body within `maxBodyBytes` however JSON
    /// spells it (a byte may take six, `\u00XX`), with room for the title and the rest.
    public static func requestLimit(forBodyBytes maxBodyBytes: Int) -> Int {
        maxBodyBytes * 6 + 64 * 1024
    }
}

/// The router with every route and middleware: what `buildApplication` serves, and what tests drive.
/// `forwarder` sends writes to the node that holds a shared log's writer role (nil: made here).
public func buildRouter(store: EventStore, settings: ServerSettings) -> Router<AnnouncementsRequestContext> {
    buildRouter(store: store, settings: settings, forwarder: nil, connections: nil)
}

/// The same, with the writes sent on to a shared log's holder, and the count of connections open
/// (`/metrics` reports it) when a server holds them.
func buildRouter(store: EventStore, settings: ServerSettings, forwarder: WriteForwarder?, connections: ConnectionCount? = nil) -> Router<AnnouncementsRequestContext> {
    let router = Router(context: AnnouncementsRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routes = RouteTable()
    let streams = StreamSlots(maxConnections: settings.connections.maxConnections)
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: RequestLogMiddleware(metrics: settings.metrics))
    router.add(middleware: CORSMiddleware(policy: settings.cors, routes: routes))
    router.add(middleware: MethodsMiddleware(routes: routes))
    let web = WebRoutes(store: store, access: settings.access, pages: .compiled, maxRequestBytes: settings.maxRequestBytes)
    router.add(middleware: ErrorMiddleware(routes: routes, web: web))
    router.add(middleware: QueryMiddleware())
    ReadRoutes(
        store: store, access: settings.access, defaultVersion: settings.defaultVersion, feedHeartbeat: settings.feedHeartbeat,
        streams: streams
    ).add(to: router)
    WriteRoutes(store: store, access: settings.access, maxRequestBytes: settings.maxRequestBytes, forwarder: forwarder).add(to: router)
    // A shared log's holder of the writer role takes the writes the other nodes send on, together.
    let forwarded = forwarder.map { _ in ForwardedWritesRoute(access: settings.access, maxRequestBytes: settings.maxRequestBytes) }
    forwarded?.add(to: router)
    web.add(to: router)
    OpenAPIDocument.add(to: router)
    settings.metricsEndpoint?.add(to: router, store: store, metrics: settings.metrics ?? ServerMetrics(), streams: streams, connections: connections)
    routes.load(router.routes)
    forwarded?.responder.set(router.buildResponder())
    return router
}

/// The HTTP server over `store`. `onListening` gets the bound host and port once it listens.
public func buildApplication(
    store: EventStore,
    settings: ServerSettings,
    logger: Logger,
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    buildApplication(store: store, settings: settings, logger: logger, forwarding: WriteForwarder.Waits(), onListening: onListening)
}

/// The same, with the waits of a write sent on to the holder of a shared log's writer role.
func buildApplication(
    store: EventStore,
    settings: ServerSettings,
    logger: Logger,
    forwarding waits: WriteForwarder.Waits,
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    let connections = ConnectionCount(maximum: settings.connections.maxConnections)
    // Built in the background while the server starts, so that the first search need not wait.
    store.startSearchIndex()
    let forwarder = store.isShared ? WriteForwarder(store: store, maxRequestBytes: settings.maxRequestBytes, waits: waits) : nil
    var application = Application(
        router: buildRouter(store: store, settings: settings, forwarder: forwarder, connections: connections),
        server: HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, limits: settings.connections, connections: connections, metrics: settings.metrics)
        },
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "announcements"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? settings.port
            if store.isShared {
                if let address = settings.advertised(host: settings.host, port: port) {
                    store.advertise(address)
                    logger.info("writes through the other nodes come here while this node holds the writer role", metadata: ["advertise": "\(address)"])
                } else {
                    logger.warning("this node listens on every interface and names no address (postgres.advertise): the other nodes cannot send it their writes, and the writer role moves to each node that has writes to make")
                }
            }
            await onListening(settings.host, port)
        },
        logger: logger
    )
    if let forwarder { application.addServices(WriteForwarderService(forwarder: forwarder)) }
    return application
}
