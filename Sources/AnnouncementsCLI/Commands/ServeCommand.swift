import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsHTTP
import ArgumentParser
import Hummingbird
import Logging
import Metrics
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `announcements serve`: the HTTP API over the log.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the announcements over HTTP.",
        discussion: """
            Opens the log as its writer (seeding an empty one that never had events), then listens and \
            prints `listening on http://HOST:PORT` with the real port. SIGINT or SIGTERM stops it gracefully. \
            Start-up follows the hash chain through every line it reads, and refuses (exit 65) a broken \
            chain, or a log that no longer holds what the snapshot or the head recorded beside it say it \
            held; the message says how to go on.
            """
    )

    @OptionGroup var options: LogOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: ArgumentHelp("The address to listen on; wins over the config's `host`.", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("The port to listen on (0: any free port); wins over the config's `port`.", valueName: "port"))
    var port: Int?

    @OptionGroup var chain: ChainOptions

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port takes 0 to 65535, not \(port).") }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in try await serve() }
    }

    private func serve() async throws(CLIError) {
        // A server outlives the reader of its log lines (`serve 2>&1 | tee`, a log shipper that
        // restarts): a write to a closed pipe fails, and the server goes on (as under systemd,
        // whose IgnoreSIGPIPE is on), rather than be killed mid-request, its snapshot unwritten.
        signal(SIGPIPE, SIG_IGN)
        let configuration = try options.configuration()
        logging.bootstrap(configuration)
        let logger = Logger(label: "announcements")
        // Metrics go to Prometheus' registry, read by GET /metrics (swift-metrics is bootstrapped
        // here only: the libraries report through its API). Turned off, nothing records them.
        let exposition = PrometheusExposition()
        if configuration.metrics.isEnabled { MetricsSystem.bootstrap(exposition.factory) }
        let metrics = configuration.metrics.isEnabled ? ServerMetrics() : nil
        let descriptors = DescriptorLimit.raise()
        let maxConnections = try DescriptorLimit.maxConnections(
            configured: configuration.http.maxConnections, at: configuration.http.maxConnectionsMark,
            descriptors: descriptors, config: options.config ?? LogOptions.defaultConfigPath
        )
        let (listenHost, listenPort) = (host ?? configuration.host, port ?? configuration.port)
        do { try ListenAddress.check(host: listenHost, port: listenPort) } catch { throw Self.failure(error, host: listenHost, port: listenPort) }
        let started = ContinuousClock.now
        let store = try await options.openStore(configuration, logger: logger, chainCheck: chain.chainCheck)
        let startUp = ContinuousClock.now - started
        metrics?.startedUp(in: startUp)
        logger.info("opened the log", metadata: [
            "log.path": "\(store.path)", "event.seq": "\(store.snapshot.seq)", "live": "\(store.snapshot.count)",
            "startup_ms": "\(Int(startUp / .milliseconds(1)))",
        ])
        let settings = ServerSettings(
            host: listenHost,
            port: listenPort,
            access: Access(configuration.tokens.map { ($0.name, $0.token, $0.role) }, reads: configuration.reads),
            maxRequestBytes: ServerSettings.requestLimit(forBodyBytes: configuration.rules.maxBodyBytes),
            feedHeartbeat: .seconds(configuration.feedHeartbeatSeconds),
            connections: ConnectionLimits(
                idleTimeout: .seconds(configuration.http.idleTimeoutSeconds),
                readTimeout: .seconds(configuration.http.readTimeoutSeconds),
                maxConnections: maxConnections,
                shutdownGrace: .seconds(configuration.http.shutdownGraceSeconds)
            ),
            cors: CORSPolicy(origins: configuration.http.corsOrigins),
            metrics: metrics,
            metricsEndpoint: configuration.metrics.isEnabled ? MetricsEndpoint(token: configuration.metrics.token, render: exposition.render) : nil,
            advertise: configuration.storage.postgres?.advertise
        )
        if configuration.http.maxConnections == nil, maxConnections < DescriptorLimit.fewConnections {
            logger.warning("the descriptor limit leaves room for only \(maxConnections) connections: raise it (ulimit -n, LimitNOFILE= in a systemd unit), or set http.max_connections to say this is meant", metadata: [
                "descriptors": "\(descriptors)", "http.max_connections": "\(maxConnections)",
            ])
        }
        logger.info("connection limits", metadata: [
            "http.max_connections": "\(maxConnections)", "descriptors": "\(descriptors)",
            "http.idle_timeout_seconds": "\(configuration.http.idleTimeoutSeconds)",
            "http.read_timeout_seconds": "\(configuration.http.readTimeoutSeconds)",
        ])
        let tokens = configuration.enabledTokens
        if !tokens.contains(where: { $0.role.may(.create) }) {
            logger.warning("\(Self.readOnlyWarning(configuration.tokens))")
        }
        if configuration.reads == .token, !tokens.contains(where: { $0.role.may(.read) }) {
            logger.warning("no token may read, and `reads: token` asks one for every read of the announcements: nothing can be read until a token is set (see `tokens` in the config)")
        }
        let off = configuration.tokens.filter { $0.token == nil }
        if !off.isEmpty {
            // An operator who named a variable expects its token to work: say which are not.
            logger.notice("tokens off, their variables unset or empty", metadata: [
                "tokens": "\(off.map { "\($0.name) (\($0.role)) from \($0.variable ?? "")" }.joined(separator: ", "))",
            ])
        }
        if !tokens.isEmpty {
            logger.info("tokens enabled", metadata: [
                "tokens": "\(tokens.map { "\($0.name) (\($0.role))" }.joined(separator: ", "))", "reads": "\(configuration.reads.rawValue)",
            ])
        }
        let app = buildApplication(store: store, settings: settings, logger: logger) { host, port in
            Output.line("listening on \(ServerSettings.url(host: host, port: port))")
            fflush(nil)
        }
        do {
            try await app.runService()
        } catch {
            await store.close()
            throw Self.failure(error, host: settings.host, port: settings.port)
        }
        logger.info("stopped serving; closing the log", metadata: ["event.seq": "\(store.seq)"])
        await store.close()
        logger.info("writes drained, log closed and its lock released", metadata: ["log.path": "\(store.path)", "event.seq": "\(store.seq)"])
    }

    /// Why no token may write, and what to set: the variable a writer's token waits for, when one
    /// does (the shipped config's `editor` reads ANNOUNCEMENTS_TOKEN).
    static func readOnlyWarning(_ tokens: [Configuration.Token]) -> String {
        let waiting = tokens.filter { $0.token == nil && $0.role.may(.create) && $0.variable != nil }
        guard let first = waiting.first, let variable = first.variable else {
            return "no token may write: the API is read-only (add a token of role author, editor or admin under `tokens` in the config)"
        }
        return "no token may write: the API is read-only until \(variable) is set (the token of `\(first.name)`, role \(first.role), is read from it; see `tokens` in the config)"
    }

    /// What stopped the server, in words that say what to do: the common reasons a server cannot
    /// listen are named, with the setting that fixes them.
    private static func failure(_ error: any Error, host: String, port: Int) -> CLIError {
        let address = "\(host):\(port)"
        if let unknown = error as? SocketAddressError.UnknownHost {
            // `--host localhost:8080`: a port written into the host (the config refuses one).
            if let (name, _) = Configuration.portWritten(in: host) {
                return CLIError(.unavailable, "cannot listen on \(address): \(host) is not a host name or address: write the port under `port` (or --port), and `host: \(name)`")
            }
            return CLIError(.unavailable, "cannot listen on \(address): \"\(host)\" is not a name this machine can resolve (\(unknown.errorDescription)); choose another with --host or `host` in the config")
        }
        switch (error as? IOError)?.errnoCode {
        case EADDRINUSE?:
            return CLIError(.unavailable, "cannot listen on \(address): the address is already in use (another server?); choose another port with --port or `port` in the config (0 takes any free port)")
        case EACCES?:
            return CLIError(.unavailable, "cannot listen on \(address): permission denied (ports below 1024 need privileges); choose another port with --port or `port` in the config")
        case EADDRNOTAVAIL?:
            return CLIError(.unavailable, "cannot listen on \(address): \(host) is not an address of this machine; choose another with --host or `host` in the config")
        default:
            return CLIError(.ioError, "the server stopped: \(error)")
        }
    }
}
