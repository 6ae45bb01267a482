import AnnouncementsCore
import Foundation
import Logging

/// Durable appends per second through `EventStore`, with 1, 16 and 64 concurrent writers, each
/// writer awaiting its acknowledgement (its line written and synced) before its next write.
struct AppendBenchmark {
    var folder: String
    var writers: [Int]
    var seconds: Double

    func run() async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var baseline: Double?
        for count in writers {
            let path = "\(folder)/append-\(count).jsonl"
            try? FileManager.default.removeItem(atPath: path)
            let store = try await EventStore.open(path: path, logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
            let clock = ContinuousClock()
            let deadline = clock.now + .milliseconds(Int(seconds * 1000))
            let start = clock.now
            let body = String(repeating: "<p>An announcement body of a typical length.</p>", count: 20)
            let written = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<count {
                    group.addTask {
                        var done = 0
                        while clock.now < deadline {
                            _ = try await store.create(AnnouncementDraft(title: "Writer \(writer) note \(done)", body: body), by: "bench")
                            done += 1
                        }
                        return done
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = (clock.now - start).seconds
            let (batches, events) = store.appendCounts
            await store.close()
            try? FileManager.default.removeItem(atPath: path)
            let rate = Double(written) / elapsed
            let ratio = baseline.map { String(format: "  %.1fx the 1-writer rate", rate / $0) } ?? ""
            if baseline == nil { baseline = rate }
            print(String(format: "%3d writers: %8.0f durable appends/s  (%d appends, %.1f per fsync)%@",
                         count, rate, written, Double(events) / Double(max(batches, 1)), ratio))
        }
    }
}
