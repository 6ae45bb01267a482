@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import Foundation
import Logging
import Prometheus
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// What an operator alerts on, in `/metrics`: the store's health, how far its snapshot is behind,
/// the snapshots that could not be written.
@Suite struct StoreStateMetricsTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The value of the sample `name{labels}` in the metrics after a scrape, or nil.
    func scrape(_ name: String, _ metrics: ServerMetrics, _ store: EventStore, _ registry: PrometheusCollectorRegistry) -> Double? {
        metrics.sample(store, openStreams: 0)
        return registry.emitToString().split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    @Test("announcements_health is 1 for the store's state and 0 for the others; it follows a failed write and the next that succeeds")
    func health() async throws {
        let folder = NSTemporaryDirectory() + "metrics-health-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let fail = Mutex(false)
        // One sync fails (a transient device error); the store's undo then syncs fine.
        let operations = FileOperations.withFailingSync { fail.withLock { failing in defer { failing = false }; return failing } }
        let store = try await EventStore.open(path: folder + "/log.jsonl", rules: ValidationRules(), seed: [], logger: quiet, metrics: StoreMetrics(factory: factory), operations: operations)
        let metrics = ServerMetrics(factory: factory)
        func states() -> [String: Double?] {
            Dictionary(uniqueKeysWithValues: StoreHealth.names.map { ($0, scrape(#"announcements_health{state="\#($0)"}"#, metrics, store, registry)) })
        }
        #expect(states() == ["ok": 1, "failing": 0, "unusable": 0, "closed": 0])
        fail.withLock { $0 = true }
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Lost"), by: "alice") }
        #expect(states() == ["ok": 0, "failing": 1, "unusable": 0, "closed": 0])
        _ = try await store.create(AnnouncementDraft(title: "Kept"), by: "alice")
        #expect(states() == ["ok": 1, "failing": 0, "unusable": 0, "closed": 0])
        #expect(scrape("announcements_write_failures_total", metrics, store, registry) == 1)
        await store.close()
    }

    @Test("announcements_snapshot_seq follows the snapshots written; one that cannot be written counts in announcements_snapshot_failures_total")
    func snapshots() async throws {
        let folder = NSTemporaryDirectory() + "metrics-snapshot-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let path = folder + "/log.jsonl"
        let store = try await EventStore.open(
            path: path, rules: ValidationRules(), seed: [], snapshots: SnapshotPolicy(everyEvents: 1, everySeconds: nil), logger: quiet,
            metrics: StoreMetrics(factory: factory), operations: .system
        )
        let metrics = ServerMetrics(factory: factory)
        #expect(scrape("announcements_snapshot_seq", metrics, store, registry) == 0, "none yet")
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        await store.snapshotter?.waitUntilWritten()
        #expect(scrape("announcements_snapshot_seq", metrics, store, registry) == 1)
        #expect(scrape("announcements_snapshot_failures_total", metrics, store, registry) == 0)
        // The snapshot's name taken by a folder that is not empty: the next cannot be renamed there.
        let snapshot = SnapshotFile.path(forLog: path)
        try FileManager.default.removeItem(atPath: snapshot)
        try FileManager.default.createDirectory(atPath: snapshot + "/in-the-way", withIntermediateDirectories: true)
        _ = try await store.create(AnnouncementDraft(title: "Two"), by: "alice")
        await store.snapshotter?.waitUntilWritten()
        #expect(scrape("announcements_snapshot_failures_total", metrics, store, registry) == 1)
        #expect(scrape("announcements_snapshot_seq", metrics, store, registry) == 1, "the newest written is still the first")
        try FileManager.default.removeItem(atPath: snapshot)
        await store.close()
    }

    @Test("a snapshot that would leave less than keep_free_mb free on the log's disk is skipped, counted, and its partial file never made")
    func snapshotSkippedOnAFullDisk() async throws {
        let folder = NSTemporaryDirectory() + "metrics-free-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let path = folder + "/log.jsonl"
        // More than any disk here has free: as a nearly full disk with the default.
        let store = try await EventStore.open(
            path: path, rules: ValidationRules(), seed: [], snapshots: SnapshotPolicy(everyEvents: 1, everySeconds: nil, keepFreeBytes: 1 << 60), logger: quiet,
            metrics: StoreMetrics(factory: factory), operations: .system
        )
        let metrics = ServerMetrics(factory: factory)
        _ = try await store.create(AnnouncementDraft(title: "One"), by: "alice")
        await store.snapshotter?.waitUntilWritten()
        #expect(scrape("announcements_snapshot_failures_total", metrics, store, registry) == 1)
        #expect(scrape("announcements_snapshot_seq", metrics, store, registry) == 0)
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)))
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.partialPath(forLog: path)))
        await store.close()
        #expect(throws: LogError.self) {
            try SnapshotContents.checkFreeSpace(for: SnapshotFile.path(forLog: path), needing: 0, keepingFree: 1 << 60)
        }
        #expect(throws: LogError.self, "more than the disk holds") {
            try SnapshotContents.checkFreeSpace(for: SnapshotFile.path(forLog: path), needing: 1 << 60, keepingFree: 0)
        }
        try SnapshotContents.checkFreeSpace(for: SnapshotFile.path(forLog: path), needing: 1 << 20, keepingFree: 1 << 20)
    }
}
