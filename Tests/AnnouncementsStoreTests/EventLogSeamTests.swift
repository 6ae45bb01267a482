import Dispatch
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// The store over a log that is not a file: it needs nothing of a log but `EventLog`.
@Suite struct EventLogSeamTests {
    /// An `EventLog` in memory, whose appends can be made to fail.
    final class MemoryLog: EventLog {
        let path = "memory"
        private let state = Mutex<(bytes: [UInt8], appends: Int, failing: Bool)>(([], 0, false))
        /// Reads as if each were a round trip to a server (see `EventLog.readsWait`).
        let readsWait: Bool
        /// The Dispatch queue each read ran on.
        let readQueues = Mutex<[String]>([])

        init(readsWait: Bool = false) {
            self.readsWait = readsWait
        }

        var durableEnd: Int64 { state.withLock { Int64($0.bytes.count) } }
        var isUnusable: Bool { false }
        var bytes: [UInt8] { state.withLock { $0.bytes } }
        var appends: Int { state.withLock { $0.appends } }

        func failAppends(_ failing: Bool) {
            state.withLock { $0.failing = failing }
        }

        func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64 {
            try state.withLock { state throws(LogError) in
                guard !state.failing else { throw LogError(.writeFailed, path: path, message: "the disk is full") }
                guard start == Int64(state.bytes.count) else { throw LogError(.unusable, path: path, message: "append at \(start)") }
                state.bytes += lines
                state.appends += 1
                return Int64(state.bytes.count)
            }
        }

        func removeAll() throws(LogError) {
            state.withLock { $0.bytes = [] }
        }

        func read(from position: Int64, count: Int) throws(LogError) -> [UInt8] {
            let queue = DispatchQueue.getSpecific(key: EventStore.onReaders) == true ? "readers" : "caller"
            readQueues.withLock { $0.append(queue) }
            return try state.withLock { state throws(LogError) in
                guard position >= 0, Int(position) + count <= state.bytes.count else {
                    throw LogError(.unreadable, path: path, message: "no bytes at \(position)")
                }
                return Array(state.bytes[Int(position)..<(Int(position) + count)])
            }
        }

        func close() {}
    }

    @Test("reads from a log whose reads wait run on the store's reader threads, never on the cooperative pool", arguments: [false, true])
    func readsOffThePool(readsWait: Bool) async throws {
        let log = MemoryLog(readsWait: readsWait)
        let store = try await EventStore.open(log: log, replay: Replay(), seed: [AnnouncementDraft(title: "One")], logger: Self.quiet)
        _ = try await store.historyLines(id: 1)
        _ = try await store.eventLines(after: 0, limit: 10)
        _ = try await store.announcement(id: 1, asOf: .seq(1))
        let queues = log.readQueues.withLock { $0 }
        #expect(queues.count == 3)
        if readsWait {
            #expect(queues.allSatisfy { $0 == "readers" }, "\(queues)")
        } else {
            #expect(queues.allSatisfy { $0 == "caller" }, "a file's reads need no hop: \(queues)")
        }
        await store.close()
    }

    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("writes, history, the feed and a failed append work the same on a log that is not a file")
    func storeOnAnyLog() async throws {
        let log = MemoryLog()
        let store = try await EventStore.open(
            log: log, replay: Replay(), rules: ValidationRules(), seed: [AnnouncementDraft(title: "Seeded")],
            snapshotter: nil, logger: Self.quiet, metrics: StoreMetrics()
        )
        let second = try await store.create(AnnouncementDraft(title: "Second", body: "<p>hi</p>"), by: "alice")
        _ = try await store.update(id: second.id, AnnouncementPatch(title: "Second, edited"), by: "bob")
        try await store.delete(id: 1, by: "carol")
        #expect(store.snapshot.announcements.map(\.title) == ["Second, edited"])

        // The log holds the store's lines, chained, and they verify as a file would.
        let lines = log.bytes.split(separator: UInt8(ascii: "\n")).map { Array($0) }
        #expect(lines.count == 4)
        var verification = LogVerification(path: log.path)
        for (number, line) in lines.enumerated() {
            verification.check(LogLine(
                number: number + 1, offset: 0, bytes: line[...], parsed: Result { () throws(LineProblem) in try EventParser.parse(line) },
                hash: LineHash(link: line), isLast: number == lines.count - 1
            ))
        }
        let report = verification.report(tail: nil)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.head == store.head)

        // History and the feed read lines back through the log.
        let history = try #require(try await store.history(id: second.id))
        #expect(history.map(\.event.type) == [.created, .edited])
        #expect(try await store.eventLines(after: 2, limit: 10).map { Array($0) } == Array(lines[2...]))

        // A failed append fails its writer, keeps nothing and leaves the state as it was.
        log.failAppends(true)
        await #expect(throws: StoreError.self) { try await store.create(AnnouncementDraft(title: "Lost"), by: "alice") }
        #expect(store.snapshot.announcements.map(\.title) == ["Second, edited"])
        log.failAppends(false)
        _ = try await store.create(AnnouncementDraft(title: "Third"), by: "alice")
        #expect(store.snapshot.announcements.map(\.title) == ["Second, edited", "Third"])
        #expect(store.lastSeq == 5)
        await store.close()
    }
}
