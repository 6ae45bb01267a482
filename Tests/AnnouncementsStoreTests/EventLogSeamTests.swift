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

        func read(from position: Int64, count: Int) throws(LogError) -> [UInt8] {
            try state.withLock { state throws(LogError) in
                guard position >= 0, Int(position) + count <= state.bytes.count else {
                    throw LogError(.unreadable, path: path, message: "no bytes at \(position)")
                }
                return Array(state.bytes[Int(position)..<(Int(position) + count)])
            }
        }

        func close() {}
    }

    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("writes, history, the feed and a failed append work the same on a log that is not a file")
    func storeOnAnyLog() async throws {
        let log = MemoryLog()
        let store = try await EventStore.open(
            log: log, replay: Replay(), rules: ValidationRules(), seed: [AnnouncementDraft(title: "Seeded")],
            snapshotter: nil, logger: Self.quiet
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
                hash: LineHash(of: line), isLast: number == lines.count - 1
            ))
        }
        let report = verification.report(tail: nil)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.head == store.head)

        // History and the feed read lines back through the log.
        let history = try #require(try store.history(id: second.id))
        #expect(history.map(\.event.type) == [.created, .edited])
        #expect(try store.eventLines(after: 2, limit: 10).map { Array($0) } == Array(lines[2...]))

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
