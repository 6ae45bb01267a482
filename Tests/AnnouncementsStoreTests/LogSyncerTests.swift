import Dispatch
import Foundation
import Prometheus
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// The log's writer: group commit, and what a failed write or sync leaves behind.
@Suite struct LogSyncerTests {
    /// Counts the writes and syncs a log makes; the first sync waits for `release`; sync number
    /// `failSync` fails.
    final class Recorder: Sendable {
        let writes = Mutex<[Int]>([])
        let syncs = Atomic(0)
        let inFirstSync = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let failSync: Int?

        init(failSync: Int? = nil) {
            self.failSync = failSync
        }

        var operations: FileOperations {
            let system = FileOperations.system
            return FileOperations(
                write: { fd, bytes, offset in
                    self.writes.withLock { $0.append(bytes.count) }
                    return system.write(fd, bytes, offset)
                },
                sync: { fd in
                    let count = self.syncs.add(1, ordering: .relaxed).newValue
                    if count == 1 {
                        self.inFirstSync.signal()
                        self.release.wait()
                    }
                    if count == self.failSync {
                        errno = EIO
                        return -1
                    }
                    return system.sync(fd)
                }
            )
        }
    }

    /// Waits (at most 10 s) until `condition` holds.
    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    }

    @Test("lines handed over while a sync runs go out together, in one write and one sync")
    func groupCommit() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let recorder = Recorder()
        let log = try FileLog(path: path, operations: recorder.operations)
        let registry = PrometheusCollectorRegistry()
        let syncer = LogSyncer(log: log, metrics: StoreMetrics(factory: PrometheusMetricsFactory(registry: registry))) {}

        try syncer.append(Array("one\n".utf8), count: 1)
        await waitOffPool(recorder.inFirstSync)
        // The first sync is running: these three wait for it, then share the next write and sync.
        try syncer.append(Array("two\n".utf8), count: 1)
        try syncer.append(Array("three\n".utf8), count: 1)
        try syncer.append(Array("four\n".utf8), count: 1)
        #expect(syncer.end == 19)
        recorder.release.signal()
        try await eventually { syncer.progress.durableEnd == 19 }
        syncer.waitUntilStopped()

        #expect(syncer.progress.durableEnd == 19)
        #expect(recorder.writes.withLock { $0 } == [4, 15])
        #expect(recorder.syncs.load(ordering: .relaxed) == 2)
        #expect(syncer.syncs.load(ordering: .relaxed) == 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\nthree\nfour\n")
        // Metrics, once per sync: two syncs of 1 and 3 lines, 4 events, each sync timed.
        let metrics = registry.emitToString()
        #expect(metrics.contains("announcements_appended_events_total 4\n"), "\(metrics)")
        #expect(metrics.contains("announcements_sync_lines_count 2\n") && metrics.contains("announcements_sync_lines_sum 4.0\n"), "\(metrics)")
        #expect(metrics.contains("announcements_sync_duration_seconds_count 2\n"), "\(metrics)")
        log.close()
    }

    @Test("a failed sync cuts its lines back, drops those handed over after them, and takes none until resumed")
    func failure() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let recorder = Recorder(failSync: 2)
        let log = try FileLog(path: path, operations: recorder.operations)
        let registry = PrometheusCollectorRegistry()
        let syncer = LogSyncer(log: log, metrics: StoreMetrics(factory: PrometheusMetricsFactory(registry: registry))) {}

        try syncer.append(Array("good\n".utf8), count: 1)
        await waitOffPool(recorder.inFirstSync)
        try syncer.append(Array("lost\n".utf8), count: 1)
        recorder.release.signal()
        try await eventually { syncer.progress.failure != nil }

        // The second sync failed: its line is cut from the file, and nothing is taken meanwhile.
        let failure = try #require(syncer.progress.failure)
        #expect(failure.start == 5 && failure.end == 10)
        #expect(syncer.progress.durableEnd == 5)
        #expect(throws: LogSyncer.Failure.self) { try syncer.append(Array("refused\n".utf8), count: 1) }
        let metrics = registry.emitToString()
        #expect(metrics.contains("announcements_write_failures_total 1\n") && metrics.contains("announcements_appended_events_total 1\n"), "\(metrics)")
        syncer.waitUntilStopped()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "good\n")

        // Once the committer has seen the failure, lines go on from where the file was cut.
        syncer.resume(after: failure)
        #expect(syncer.end == 5)
        try syncer.append(Array("again\n".utf8), count: 1)
        try await eventually { syncer.progress.durableEnd == 11 }
        syncer.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "good\nagain\n")
        #expect(throws: LogSyncer.Failure.self) { try syncer.append(Array("closed\n".utf8), count: 1) }
    }

    @Test("inline, a lone hand-over is written and synced on the caller's thread before append returns; a failure is kept the same way")
    func inlineSync() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let syncThreads = Mutex<[UInt]>([])
        let failNext = Atomic(false)
        let system = FileOperations.system
        let operations = FileOperations(write: system.write, sync: { fd in
            syncThreads.withLock { $0.append(Self.threadID()) }
            if failNext.exchange(false, ordering: .relaxed) {
                errno = EIO
                return -1
            }
            return system.sync(fd)
        })
        let notified = Atomic(0)
        let log = try FileLog(path: path, operations: operations)
        let syncer = LogSyncer(log: log, metrics: StoreMetrics()) { notified.add(1, ordering: .relaxed) }

        try syncer.append(Array("one\n".utf8), count: 1, inline: true)
        // Durable already: nothing to wait for, and nobody was woken to say so.
        #expect(syncer.progress.durableEnd == 4)
        #expect(syncer.progress.failure == nil)
        #expect(syncThreads.withLock { $0 } == [Self.threadID()])
        #expect(notified.load(ordering: .relaxed) == 0)

        failNext.store(true, ordering: .relaxed)
        try syncer.append(Array("two\n".utf8), count: 1, inline: true)
        let failure = try #require(syncer.progress.failure)
        #expect((failure.start, failure.end) == (4, 8))
        #expect(syncer.progress.durableEnd == 4)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
        #expect(throws: LogSyncer.Failure.self) { try syncer.append(Array("three\n".utf8), count: 1, inline: true) }
        syncer.resume(after: failure)
        try syncer.append(Array("two\n".utf8), count: 1, inline: true)
        #expect(syncer.progress.durableEnd == 8)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\ntwo\n")
        syncer.close()
    }

    /// The calling thread's identity (`pthread_t` is an integer on Linux, a pointer on Darwin).
    private static func threadID() -> UInt {
        UInt(bitPattern: Int(bitPattern: pthread_self()))
    }
}
