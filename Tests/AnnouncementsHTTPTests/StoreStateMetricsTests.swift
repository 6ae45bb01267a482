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
    /// A store in a folder of its own, whose metrics and the server's go to one registry.
    struct Scraped {
        let path: String
        let store: EventStore
        let metrics: ServerMetrics
        let registry: PrometheusCollectorRegistry

        static func open(snapshots: SnapshotPolicy = .off, operations: FileOperations = .system) async throws -> Scraped {
            let path = NSTemporaryDirectory() + "metrics-\(UUID().uuidString)/log.jsonl"
            let registry = PrometheusCollectorRegistry()
            let factory = PrometheusMetricsFactory(registry: registry)
            let store = try await EventStore.open(
                path: path, rules: ValidationRules(), seed: [], snapshots: snapshots, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
                metrics: StoreMetrics(factory: factory), operations: operations
            )
            return Scraped(path: path, store: store, metrics: ServerMetrics(factory: factory), registry: registry)
        }

        /// The value of the sample `name{labels}` after a scrape, or nil.
        func value(_ name: String) -> Double? {
            metrics.sample(store, openStreams: 0, openConnections: nil)
            return registry.emitToString().split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }

        func close() async {
            await store.close()
            try? FileManager.default.removeItem(atPath: FileLog.folder(of: path))
        }
    }

    @Test("announcements_health is 1 for the store's state and 0 for the others; it follows a failed write and the next that succeeds")
    func health() async throws {
        let fail = Mutex(false)
        // One sync fails (a transient device error); the store's undo then syncs fine.
        let scraped = try await Scraped.open(operations: .withFailingSync { fail.withLock { failing in defer { failing = false }; return failing } })
        func states() -> [String: Double?] {
            Dictionary(uniqueKeysWithValues: StoreHealth.State.allCases.map { ($0.rawValue, scraped.value(#"announcements_health{state="\#($0.rawValue)"}"#)) })
        }
        #expect(states() == ["ok": 1, "failing": 0, "unusable": 0, "closed": 0])
        fail.withLock { $0 = true }
        await #expect(throws: StoreError.self) { try await scraped.store.create(AnnouncementDraft(title: "Lost"), by: "alice") }
        #expect(states() == ["ok": 0, "failing": 1, "unusable": 0, "closed": 0])
        _ = try await scraped.store.create(AnnouncementDraft(title: "Kept"), by: "alice")
        #expect(states() == ["ok": 1, "failing": 0, "unusable": 0, "closed": 0])
        #expect(scraped.value("announcements_write_failures_total") == 1)
        await scraped.close()
    }

    @Test("announcements_snapshot_seq follows the snapshots written; one that cannot be written counts in announcements_snapshot_failures_total")
    func snapshots() async throws {
        let scraped = try await Scraped.open(snapshots: SnapshotPolicy(everyEvents: 1, everySeconds: nil))
        #expect(scraped.value("announcements_snapshot_seq") == 0, "none yet")
        _ = try await scraped.store.create(AnnouncementDraft(title: "One"), by: "alice")
        await scraped.store.snapshotter?.waitUntilWritten()
        #expect(scraped.value("announcements_snapshot_seq") == 1)
        #expect(scraped.value("announcements_snapshot_failures_total") == 0)
        // The snapshot's name taken by a folder that is not empty: the next cannot be renamed there.
        let snapshot = SnapshotFile.path(forLog: scraped.path)
        try FileManager.default.removeItem(atPath: snapshot)
        try FileManager.default.createDirectory(atPath: snapshot + "/in-the-way", withIntermediateDirectories: true)
        _ = try await scraped.store.create(AnnouncementDraft(title: "Two"), by: "alice")
        await scraped.store.snapshotter?.waitUntilWritten()
        #expect(scraped.value("announcements_snapshot_failures_total") == 1)
        #expect(scraped.value("announcements_snapshot_seq") == 1, "the newest written is still the first")
        try FileManager.default.removeItem(atPath: snapshot)
        await scraped.close()
    }

    @Test("a snapshot that would leave less than keep_free_mb free on the log's disk is skipped, counted, and its partial file never made")
    func snapshotSkippedOnAFullDisk() async throws {
        // More than any disk here has free: as a nearly full disk with the default.
        let scraped = try await Scraped.open(snapshots: SnapshotPolicy(everyEvents: 1, everySeconds: nil, keepFreeBytes: 1 << 60))
        _ = try await scraped.store.create(AnnouncementDraft(title: "One"), by: "alice")
        await scraped.store.snapshotter?.waitUntilWritten()
        #expect(scraped.value("announcements_snapshot_failures_total") == 1)
        #expect(scraped.value("announcements_snapshot_seq") == 0)
        let snapshot = SnapshotFile.path(forLog: scraped.path)
        #expect(!FileManager.default.fileExists(atPath: snapshot))
        #expect(!FileManager.default.fileExists(atPath: SnapshotFile.partialPath(forLog: scraped.path)))
        #expect(throws: LogError.self) { try SnapshotContents.checkFreeSpace(for: snapshot, needing: 0, keepingFree: 1 << 60) }
        #expect(throws: LogError.self, "more than the disk holds") { try SnapshotContents.checkFreeSpace(for: snapshot, needing: 1 << 60, keepingFree: 0) }
        try SnapshotContents.checkFreeSpace(for: snapshot, needing: 1 << 20, keepingFree: 1 << 20)
        // Sizes in the unit they fill, so that a small snapshot's need is not "0 MiB".
        #expect([0, 1, 1023, 1024, 20_000, (1 << 20) - 1, 1 << 20, 3_400_000, 1 << 30, 5 << 40, 4 << 50].map(SnapshotContents.size) ==
                ["0 bytes", "1 byte", "1023 bytes", "1.0 KiB", "19.5 KiB", "1.0 MiB", "1.0 MiB", "3.2 MiB", "1.0 GiB", "5.0 TiB", "4096.0 TiB"])
        do {
            try SnapshotContents.checkFreeSpace(for: snapshot, needing: 20_000, keepingFree: 1 << 60)
            Issue.record("no room for 2^60 bytes kept free")
        } catch {
            #expect(error.message.contains("about 19.5 KiB needed, and 1048576.0 TiB kept free"), "\(error.message)")
        }
        await scraped.close()
    }
}
