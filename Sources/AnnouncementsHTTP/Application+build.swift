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
        metricsEndpoint: MetricsEndpoint? = nil
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
    }

    /// The largest request that still lets through every body within `maxBodyBytes` however JSON
    /// spells it (a byte may take six, `\u00XX`), with room for the title and the rest.
    public static func requestLimit(forBodyBytes maxBodyBytes: Int) -> Int {
        maxBodyBytes * 6 + 64 * 1024
    }
}

/// The router with every route and middleware: what `buildApplication` serves, and what tests drive.
public func buildRouter(store: EventStore, settings: ServerSettings) -> Router<AnnouncementsRequestContext> {
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
    router.add(middleware: ReadYourWritesMiddleware(store: store, access: settings.access))
    ReadRoutes(
        store: store, access: settings.access, defaultVersion: settings.defaultVersion, feedHeartbeat: settings.feedHeartbeat,
        streams: streams
    ).add(to: router)
    WriteRoutes(store: store, access: settings.access, maxRequestBytes: settings.maxRequestBytes).add(to: router)
    web.add(to: router)
    OpenAPIDocument.add(to: router)
    settings.metricsEndpoint?.add(to: router, store: store, metrics: settings.metrics ?? ServerMetrics(), streams: streams)
    routes.load(router.routes)
    return router
}

/// The HTTP server over `store`. `onListening` gets the bound host and port once it listens.
public func buildApplication(
    store: EventStore,
    settings: ServerSettings,
    logger: Logger,
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    let connections = ConnectionCount(maximum: settings.connections.maxConnections)
    // Built in the background while the server starts, so that the first search need not wait.
    store.startSearchIndex()
    return Application(
        router: buildRouter(store: store, settings: settings),
        server: HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, limits: settings.connections, connections: connections, metrics: settings.metrics)
        },
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "announcements"),
        onServerRunning: { channel in
            await onListening(settings.host, channel.localAddress?.port ?? settings.port)
        },
        logger: logger
    )
}
