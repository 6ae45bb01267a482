import AnnouncementsDomain
import AnnouncementsStore
import CoreMetrics
import HTTPTypes
import Synchronization

/// What the server reports through swift-metrics: each request by route template, method and
/// status class, with its duration; and, when scraped, the log's seq and size, the live
/// announcements, the event-stream subscribers, the connections open, the store's health, the newest snapshot's seq,
/// how long start-up took, and the release and its start time. Labels come from fixed sets (route templates, never paths or ids; known
/// methods; health states), so their number stays bounded whatever clients send. The executable
/// chooses where they go (`MetricsSystem.bootstrap`). Requests reach the metrics in bursts, from
/// the thread that answered them, and all of them at each scrape (`sample`): a backend that is not
/// scraped through `GET /metrics` sees up to 63 requests a thread late.
public final class ServerMetrics: Sendable {
    private let factory: any MetricsFactory
    private let requests = Mutex<[RequestKey: RequestMetrics]>([:])
    /// Each request's key and duration, kept by the thread that answered it until a burst of them
    /// (or a scrape, `sample`) hands them on to the metrics: a request writes no metric that every
    /// core writes.
    private let answered = ThreadShards<(key: RequestKey, duration: Duration)>()
    private let seq: Gauge, logBytes: Gauge, live: Gauge, streams: Gauge, startup: Gauge, snapshotSeq: Gauge, connectionsOpen: Gauge, unsealed: Gauge
    /// Set once, when the metrics are made: the release serving, and when it started.
    private let buildInfo: Gauge, startTime: Gauge
    /// `announcements_health{state}`: 1 for the store's state now, 0 for the others.
    private let health: [StoreHealth.State: Gauge]
    /// Connections the server closed or refused before a request reached the router, by why.
    private let cutOff: [ConnectionCut: Counter]

    /// Why a connection was closed or refused before a request reached the router: the label of
    /// `http_connections_cut_total`.
    enum ConnectionCut: String, CaseIterable {
        /// Past `http.max_connections`: answered 503 and closed.
        case overLimit = "over_limit"
        /// Idle longer than the idle timeout.
        case idleTimeout = "idle_timeout"
        /// A request that took longer than the read timeout to arrive.
        case readTimeout = "read_timeout"
        /// A response left unread longer than the idle timeout.
        case unread
        /// Still open when the shutdown grace period ended.
        case shutdown
        /// Not HTTP, or past the head limits: answered 4xx and closed.
        case badRequest = "bad_request"
    }

    private struct RequestKey: Hashable, Sendable {
        var route: String
        var method: String
        var statusClass: Int
    }

    private struct RequestMetrics {
        var count: Counter
        var duration: Timer
    }

    /// The metrics, made by `factory` (the bootstrapped one unless given).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        seq = Gauge(label: Name.seq, factory: factory)
        logBytes = Gauge(label: Name.logBytes, factory: factory)
        live = Gauge(label: Name.live, factory: factory)
        streams = Gauge(label: Name.streams, factory: factory)
        startup = Gauge(label: Name.startup, factory: factory)
        snapshotSeq = Gauge(label: Name.snapshotSeq, factory: factory)
        connectionsOpen = Gauge(label: Name.connectionsOpen, factory: factory)
        unsealed = Gauge(label: Name.unsealed, factory: factory)
        buildInfo = Gauge(label: Name.buildInfo, dimensions: [("version", Release.version)], factory: factory)
        buildInfo.record(1)
        startTime = Gauge(label: Name.startTime, factory: factory)
        startTime.record(Double(Timestamp.now().millisecondsSince1970) / 1000)
        health = Dictionary(uniqueKeysWithValues: StoreHealth.State.allCases.map { state in
            (state, Gauge(label: Name.health, dimensions: [("state", state.rawValue)], factory: factory))
        })
        cutOff = Dictionary(uniqueKeysWithValues: ConnectionCut.allCases.map { reason in
            (reason, Counter(label: Name.cutOff, dimensions: [("reason", reason.rawValue)], factory: factory))
        })
    }

    /// The metrics' names.
    private enum Name {
        static let requests = "http_requests_total"
        static let duration = "http_request_duration_seconds"
        static let cutOff = "http_connections_cut_total"
        static let connectionsOpen = "http_connections_open"
        static let seq = "announcements_log_seq"
        static let logBytes = "announcements_log_bytes"
        static let live = "announcements_live"
        static let streams = "announcements_stream_subscribers"
        static let startup = "announcements_startup_seconds"
        static let snapshotSeq = "announcements_snapshot_seq"
        static let health = "announcements_health"
        static let unsealed = "announcements_erasures_unsealed"
        static let buildInfo = "announcements_build_info"
        static let startTime = "process_start_time_seconds"
    }

    /// What each metric counts and in what unit, by name: its `# HELP` in a Prometheus scrape.
    public static let help: [String: String] = [
        Name.requests: "HTTP requests answered, by route template, method and status class.",
        Name.duration: "Seconds from a request's arrival to its answer's head, by route template and method.",
        Name.cutOff: "Connections closed or refused before a request reached the router, by why.",
        Name.connectionsOpen: "Connections open now, the scrape's own included: at most http.max_connections (the start-up log says it).",
        Name.seq: "The seq of the last durable event.",
        Name.logBytes: "The log's size in bytes (of a file log).",
        Name.live: "Live announcements.",
        Name.streams: "Open GET /events streams.",
        Name.startup: "Seconds the log took to open at start-up (snapshot and replay).",
        Name.snapshotSeq: "The seq the newest snapshot beside the log covers (0: none).",
        Name.health: "1 for the store's state now (ok, failing, unusable, closed), 0 for the others.",
        Name.unsealed: "Erased announcements whose lines still hold their texts (an overwrite that failed, or another node's not read back yet): alert when above 0 for minutes.",
        Name.buildInfo: "1, labelled with the release serving (what `announcements --version` prints).",
        Name.startTime: "When the server started, in seconds since 1970-01-01 UTC (Unix time).",
    ]

    /// Counts a connection closed or refused for `reason` (no lock: the counters are made once).
    func connectionCut(_ reason: ConnectionCut) {
        cutOff[reason]?.increment()
    }

    /// Counts a request answered with `status` after `duration`; `route` is its template
    /// (`/announcements/{id}`; Hummingbird names an unmatched one `NotFound`). Kept by the calling
    /// thread, and counted with the others it answered in a burst, or at the next scrape (`sample`).
    func request(route: String?, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        let key = RequestKey(route: route ?? "NotFound", method: Self.methods.contains(method) ? method.rawValue : "other", statusClass: status.code / 100)
        answered.add((key, duration)) { burst in count(burst) }
    }

    /// Counts answered requests: one look-up of their metrics, then each key's count and durations.
    private func count(_ answered: [(key: RequestKey, duration: Duration)]) {
        guard !answered.isEmpty else { return }
        var durations: [RequestKey: [Duration]] = [:]
        for request in answered { durations[request.key, default: []].append(request.duration) }
        let counted = requests.withLock { requests in
            durations.map { key, times in
                if let metrics = requests[key] { return (metrics, times) }
                let metrics = RequestMetrics(
                    count: Counter(label: Name.requests, dimensions: [("route", key.route), ("method", key.method), ("status", "\(key.statusClass)xx")], factory: factory),
                    duration: Timer(label: Name.duration, dimensions: [("route", key.route), ("method", key.method)], factory: factory)
                )
                requests[key] = metrics
                return (metrics, times)
            }
        }
        for (metrics, times) in counted {
            metrics.count.increment(by: times.count)
            for duration in times { metrics.duration.record(duration) }
        }
    }

    /// Counts the requests their threads still keep (each one's burst being counted first).
    func countAnswered() {
        count(answered.takeAll())
    }

    /// The methods named in labels; any other is `other`.
    private static let methods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    /// Counts the requests their threads still keep, and sets the gauges read from the store and
    /// the open event streams: what a scrape reports, every request answered before it counted.
    func sample(_ store: EventStore, openStreams: Int, openConnections: Int?) {
        countAnswered()
        if let openConnections { connectionsOpen.record(openConnections) }
        let state = store.snapshot
        seq.record(state.seq)
        live.record(state.count)
        logBytes.record(store.durableEnd)
        streams.record(openStreams)
        let now = store.health.state
        for (state, gauge) in health { gauge.record(state == now ? 1 : 0) }
        snapshotSeq.record(store.snapshotSeq ?? 0)
        unsealed.record(store.unsealedErasures)
    }

    /// Records how long start-up took to replay the log (or load a snapshot and replay its tail).
    public func startedUp(in duration: Duration) {
        let (seconds, attoseconds) = duration.components
        startup.record(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
