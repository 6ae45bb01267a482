import AnnouncementsStore
import Prometheus

/// The metrics in Prometheus' text format, for `GET /metrics`: a registry, and the factory that
/// fills it (what `serve` bootstraps swift-metrics with), with histogram buckets sized for this
/// server (requests and syncs take well under a millisecond; the library's start at 5 ms).
struct PrometheusExposition: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
        ]
        factory.valueHistogramBuckets[StoreMetrics.linesPerSyncLabel] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        self.factory = factory
    }

    /// The current values, in the text format (version 0.0.4).
    func render() -> [UInt8] {
        registry.emitToBuffer()
    }
}
