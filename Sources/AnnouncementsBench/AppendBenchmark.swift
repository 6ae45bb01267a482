import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Durable appends per second through `EventStore`, with 1, 16 and 64 concurrent writers, each
/// writer awaiting its acknowledgement (its line written and synced) before its next write.
///
/// Beside each figure, in the same run, the disk's own ceiling: a bare loop of one `write` of as
/// many lines as the store put in each sync, then `fdatasync`. A store with one sync at a time
/// cannot beat it; the ratio shows how much of the disk the store gets.
struct AppendBenchmark {
    var folder: String
    var writers: [Int]
    var seconds: Double
    var followers = 100
    /// Appends go to a new table in this database instead of a file (no disk ceiling is printed).
    var postgres: PostgresSettings?
    /// The PostgreSQL log opened shared, as `serve` opens it (see `PostgresLog`), not alone.
    var shared = false

    func run() async throws {
        try BenchError.createFolder(folder)
        var baseline: Double?
        var rates: [Int: Double] = [:]
        for count in writers {
            let run = try await rate(writers: count, followers: 0)
            rates[count] = run.rate
            let (rate, written, perSync) = (run.rate, run.written, run.perSync)
            let ratio = baseline.map { String(format: "  %.1fx the 1-writer rate", rate / $0) } ?? ""
            if baseline == nil { baseline = rate }
            print(String(format: "%3d writers: %8.0f durable appends/s  (%d appends, %.1f per %@, %.1f µs of CPU each)%@",
                         count, rate, written, perSync, postgres == nil ? "fsync" : "commit", run.cpuPerAppend * 1e6, ratio))
            guard postgres == nil else { continue }
            let linesPerSync = max(1, Int(perSync.rounded()))
            let ceiling = try diskCeiling(linesPerSync: linesPerSync, lineBytes: 1100)
            print(String(format: "             disk alone, write + fdatasync of %d lines: %8.0f lines/s  (store = %.2f of it)",
                         linesPerSync, ceiling, rate / ceiling))
        }
        guard let most = writers.max(), let alone = rates[most], postgres == nil else { return }
        let full = try diskCeiling(linesPerSync: most, lineBytes: 1100)
        print(String(format: "disk alone, all %d writers' lines in every sync: %8.0f lines/s", most, full))
        guard followers > 0 else { return }

        // The event feed's cost to writers: the most writers with and without followers, in
        // alternating runs so that the machine's drift falls on both alike.
        var with: [Double] = [], without = [alone]
        for pair in 1...Self.followerPairs {
            let followed = try await rate(writers: most, followers: followers)
            with.append(followed.rate)
            if pair > 1 { without.append(try await rate(writers: most, followers: 0).rate) }
            print(String(format: "%3d writers with %d feed followers: %8.0f durable appends/s, %.2f of the %.0f without (each follower read %.0f%% of the events)",
                         most, followers, followed.rate, followed.rate / without[pair - 1], without[pair - 1], followed.readShare * 100))
        }
        let total = with.reduce(0, +) / without.reduce(0, +)
        print(String(format: "with %d followers, over %d alternating runs: %.2f of the rate without", followers, with.count, total))
    }

    /// Removes a run's log and what the store keeps beside it (the head's record: a next run on
    /// the same path would otherwise find a record of lines its new log does not hold, and refuse).
    private static func removeLog(at path: String) {
        for file in [path, HeadRecord.path(forLog: path), SnapshotFile.path(forLog: path)] { try? FileManager.default.removeItem(atPath: file) }
    }

    /// How many runs with followers alternate with runs without.
    static let followerPairs = 3

    /// Appends/s with `writers` writers while `followers` readers follow the log as the SSE feed
    /// does (wait for events, read them back from the log), the appends, the lines per sync, and
    /// the share of the events the followers read.
    private func rate(writers count: Int, followers: Int) async throws -> (rate: Double, written: Int, perSync: Double, readShare: Double, cpuPerAppend: Double) {
        let path = "\(folder)/append-\(count)-\(followers).jsonl"
        Self.removeLog(at: path)
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let store: EventStore
        if var settings = postgres {
            settings.table = "bench_append_\(count)_\(followers)_\(UInt32.random(in: 0...UInt32.max))"
            let (log, replay) = try await PostgresLog.open(settings, alone: !shared, logger: quiet)
            store = try await EventStore.open(log: log, replay: replay, logger: quiet)
        } else {
            store = try await EventStore.open(path: path, logger: quiet)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        let start = clock.now
        let cpuStart = Self.processCPUSeconds()
        // One body for every write, escaped once: the request's own work (decoding and escaping
        // it) is the HTTP layer's, measured by scripts/http-bench.sh, not the store's.
        let body = JSONText(String(repeating: "<p>An announcement body of a typical length.</p>", count: 20))
        let followerTasks = (0..<followers).map { _ in
            Task {
                var last = 0
                while !Task.isCancelled {
                    let read = try? await store.followerLines(after: last)
                    last += read?.lines.count ?? 0
                    if let pause = read.map({ $0.pause }) ?? EventStore.followerPause {
                        // Caught up: gather events for a moment, as the SSE stream does.
                        try? await Task.sleep(for: pause)
                        await store.waitForEvents(after: last)
                    }
                }
                return last
            }
        }
        let written = try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<count {
                group.addTask {
                    var done = 0
                    while clock.now < deadline {
                        _ = try await store.create(AnnouncementDraft(title: "Writer \(writer) note \(done)", bodyText: body), by: "bench")
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = (clock.now - start).seconds
        let cpu = Self.processCPUSeconds() - cpuStart
        let (batches, events) = store.appendCounts
        for task in followerTasks { task.cancel() }
        var read = 0
        for task in followerTasks { read += await task.value }
        await store.close()
        Self.removeLog(at: path)
        let readShare = followers == 0 ? 1 : Double(read) / Double(followers) / Double(max(written, 1))
        return (Double(written) / elapsed, written, Double(events) / Double(max(batches, 1)), readShare, cpu / Double(max(written, 1)))
    }

    /// The CPU time (user and system, all threads) this process has used: the store's cost per
    /// append, which depends less than the rate on how fast the disk syncs that day.
    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Lines per second of a bare loop writing `linesPerSync` lines and syncing, for one second.
    private func diskCeiling(linesPerSync: Int, lineBytes: Int) throws -> Double {
        try DiskSync(path: "\(folder)/ceiling.bin", linesPerSync: linesPerSync, lineBytes: lineBytes).run(for: .seconds(1)).linesPerSecond
    }
}
