import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging

/// A server's start-up, `EventStore.open` on the log: from the whole log, and from the snapshot
/// beside it, measured side by side in one run (the snapshot is written first when there is none).
struct StartupBenchmark {
    var path: String
    var runs: Int
    /// Whether the snapshot stores the search index, as a server's does.
    var searchIndex = true

    func run() async throws {
        // Warnings shown: a snapshot the store ignores (and replays the whole log instead) says why,
        // rather than passing for a slow load.
        let logger = Logger(label: "bench") { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let clock = ContinuousClock()
        let snapshots = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)
        // Opening with snapshots and closing writes one covering the whole log, if none does yet.
        let writeStart = clock.now
        let writer = try await EventStore.open(path: path, snapshots: snapshots, logger: logger)
        // As a server does: the snapshot written at the close stores the search index.
        if searchIndex { writer.startSearchIndex() }
        await writer.close()
        let prepared = clock.now - writeStart
        let snapshotBytes = (try? FileManager.default.attributesOfItem(atPath: path + ".snapshot")[.size] as? Int) ?? 0

        var full: [Duration] = []
        var fromSnapshot: [Duration] = []
        var events = 0
        for _ in 0..<runs {
            let fullStart = clock.now
            let whole = try await EventStore.open(path: path, snapshots: .off, logger: logger)
            full.append(clock.now - fullStart)
            events = whole.snapshot.seq
            await whole.close()

            let snapshotStart = clock.now
            let loaded = try await EventStore.open(path: path, snapshots: snapshots, logger: logger)
            fromSnapshot.append(clock.now - snapshotStart)
            await loaded.close()
        }
        let fullTime = full.sorted()[full.count / 2].seconds
        let snapshotTime = fromSnapshot.sorted()[fromSnapshot.count / 2].seconds
        print("start-up: \(path), \(events) events, snapshot \(String(format: "%.0f", Double(snapshotBytes) / 1_000_000)) MB (open + write + close before the runs: \(String(format: "%.1f", prepared.seconds)) s)")
        print(String(format: "open, whole log (median of %d):     %.3f s", runs, fullTime))
        print(String(format: "open, from snapshot (median of %d): %.3f s  (%.1fx faster)", runs, snapshotTime, fullTime / snapshotTime))
    }
}
