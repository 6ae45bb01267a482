import AnnouncementsHTTP
import AnnouncementsStore
import CoreMetrics
import Prometheus

/// The metrics in Prometheus' text format, for `GET /metrics`: a registry, and the factory that
/// fills it (what `serve` bootstraps swift-metrics with), with each metric's help text (what it
/// counts and in what unit, the `# HELP` line) and histogram buckets sized for this server
/// (requests and syncs take well under a millisecond; the library's start at 5 ms).
struct PrometheusExposition: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: HelpfulMetricsFactory

    init() {
        registry = PrometheusCollectorRegistry()
        factory = HelpfulMetricsFactory(
            registry: registry,
            help: ServerMetrics.help.merging(StoreMetrics.help) { first, _ in first },
            durationBuckets: [
                .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
                .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
            ],
            valueBuckets: [StoreMetrics.linesPerSyncLabel: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]]
        )
    }

    /// The current values, in the text format (version 0.0.4).
    func render() -> [UInt8] {
        registry.emitToBuffer()
    }
}

/// swift-metrics' handlers in a Prometheus registry, as swift-prometheus' own factory makes them
/// (a counter, a gauge for a recorder that does not aggregate or a meter, a histogram for one that
/// does and for a timer), each with its name's help text: a metric without one is left without a
/// `# HELP` line, which `promtool check metrics` refuses (the test script runs it).
struct HelpfulMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    /// Each metric's help text, by name.
    let help: [String: String]
    let durationBuckets: [Duration]
    /// A value histogram's buckets, by name (`defaultValueBuckets` for the others).
    let valueBuckets: [String: [Double]]
    let defaultValueBuckets: [Double] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

    /// The metric named `label`, with its help text (the name as it is: no namespace or unit added).
    private func named(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return registry.makeGauge(descriptor: named(label), labels: dimensions) }
        return registry.makeValueHistogram(descriptor: named(label), labels: dimensions, buckets: valueBuckets[label] ?? defaultValueBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: named(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: named(label), labels: dimensions, buckets: durationBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        switch handler {
        case let gauge as Prometheus.Gauge: registry.unregisterGauge(gauge)
        case let histogram as ValueHistogram: registry.unregisterValueHistogram(histogram)
        default: break
        }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
