import AnnouncementsStore
import CoreMetrics
import HTTPTypes
import Synchronization

/// What the server reports through swift-metrics: each request by route template, method and
/// status class, with its duration; and, when scraped, the log's seq and size, the live
/// announcements, the event-stream subscribers, the store's health, the newest snapshot's seq and
/// how long start-up took. Labels come from fixed sets (route templates, never paths or ids; known
/// methods; health states), so their number stays bounded whatever clients send. The executable chooses where they go (`MetricsSystem.bootstrap`).
public final class ServerMetrics: Sendable {
    private let factory: any MetricsFactory
    private let requests = Mutex<[RequestKey: RequestMetrics]>([:])
    private let seq: Gauge, logBytes: Gauge, live: Gauge, streams: Gauge, startup: Gauge, snapshotSeq: Gauge
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

    private struct RequestKey: Hashable {
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
        seq = Gauge(label: "announcements_log_seq", factory: factory)
        logBytes = Gauge(label: "announcements_log_bytes", factory: factory)
        live = Gauge(label: "announcements_live", factory: factory)
        streams = Gauge(label: "announcements_stream_subscribers", factory: factory)
        startup = Gauge(label: "announcements_startup_seconds", factory: factory)
        snapshotSeq = Gauge(label: "announcements_snapshot_seq", factory: factory)
        health = Dictionary(uniqueKeysWithValues: StoreHealth.State.allCases.map { state in
            (state, Gauge(label: "announcements_health", dimensions: [("state", state.rawValue)], factory: factory))
        })
        cutOff = Dictionary(uniqueKeysWithValues: ConnectionCut.allCases.map { reason in
            (reason, Counter(label: "http_connections_cut_total", dimensions: [("reason", reason.rawValue)], factory: factory))
        })
    }

    /// Counts a connection closed or refused for `reason` (no lock: the counters are made once).
    func connectionCut(_ reason: ConnectionCut) {
        cutOff[reason]?.increment()
    }

    /// Counts a request answered with `status` after `duration`; `route` is its template
    /// (`/announcements/{id}`; Hummingbird names an unmatched one `NotFound`).
    func request(route: String?, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        let key = RequestKey(route: route ?? "NotFound", method: Self.methods.contains(method) ? method.rawValue : "other", statusClass: status.code / 100)
        let metrics = requests.withLock { requests in
            if let metrics = requests[key] { return metrics }
            let metrics = RequestMetrics(
                count: Counter(label: "http_requests_total", dimensions: [("route", key.route), ("method", key.method), ("status", "\(key.statusClass)xx")], factory: factory),
                duration: Timer(label: "http_request_duration_seconds", dimensions: [("route", key.route), ("method", key.method)], factory: factory)
            )
            requests[key] = metrics
            return metrics
        }
        metrics.count.increment()
        metrics.duration.record(duration)
    }

    /// The methods named in labels; any other is `other`.
    private static let methods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    /// Sets the gauges read from the store, and the open event streams (what a scrape reports).
    func sample(_ store: EventStore, openStreams: Int) {
        let state = store.snapshot
        seq.record(state.seq)
        live.record(state.count)
        logBytes.record(store.durableEnd)
        streams.record(openStreams)
        let now = store.health.state
        for (state, gauge) in health { gauge.record(state == now ? 1 : 0) }
        snapshotSeq.record(store.snapshotSeq ?? 0)
    }

    /// Records how long start-up took to replay the log (or load a snapshot and replay its tail).
    public func startedUp(in duration: Duration) {
        let (seconds, attoseconds) = duration.components
        startup.record(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
