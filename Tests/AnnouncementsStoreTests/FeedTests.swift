import Foundation
import Logging
import Synchronization
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

#if canImport(Glibc)
import Glibc
#endif

@Suite struct FeedTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A reader of a log whose line `n` is `"n"`, counting its reads.
    final class FakeLog: Sendable {
        let reads = Mutex<[(after: Int, limit: Int)]>([])
        let lastSeq: Int

        init(lastSeq: Int) { self.lastSeq = lastSeq }

        func read(after: Int, limit: Int) -> [ArraySlice<UInt8>] {
            reads.withLock { $0.append((after, limit)) }
            return (after + 1...min(lastSeq, after + limit)).map { ArraySlice("\($0)".utf8) }
        }
    }

    func seqs(_ lines: [ArraySlice<UInt8>]) -> [Int] {
        lines.map { Int(String(decoding: $0, as: UTF8.self)) ?? -1 }
    }

    @Test("followers at different places in one page share its read, each from where it is")
    func sharedCompletePages() throws {
        let log = FakeLog(lastSeq: 10)
        var pages = FeedPages(size: 4)
        #expect(seqs(try pages.lines(after: 0, lastSeq: 10, read: log.read)) == [1, 2, 3, 4])
        #expect(seqs(try pages.lines(after: 0, lastSeq: 10, read: log.read)) == [1, 2, 3, 4])
        #expect(seqs(try pages.lines(after: 2, lastSeq: 10, read: log.read)) == [3, 4])
        // A follower in the middle of page 1 gets the rest of that page only, read whole for others.
        #expect(seqs(try pages.lines(after: 6, lastSeq: 10, read: log.read)) == [7, 8])
        #expect(seqs(try pages.lines(after: 4, lastSeq: 10, read: log.read)) == [5, 6, 7, 8])
        #expect(log.reads.withLock { $0.map(\.after) } == [0, 4])
    }

    @Test("a complete page of long lines (a read cut short) is not kept: once found, it is read from where each follower is")
    func longPages() throws {
        let log = FakeLog(lastSeq: 10)
        var pages = FeedPages(size: 8)
        // Reads of at most 3 lines, as the byte limit cuts a page of long lines.
        let cut: (Int, Int) throws(StoreError) -> [ArraySlice<UInt8>] = { after, limit in log.read(after: after, limit: min(limit, 3)) }
        #expect(seqs(try pages.lines(after: 0, lastSeq: 10, read: cut)) == [1, 2, 3])
        #expect(seqs(try pages.lines(after: 3, lastSeq: 10, read: cut)) == [4, 5, 6])
        #expect(seqs(try pages.lines(after: 6, lastSeq: 10, read: cut)) == [7, 8])
        #expect(log.reads.withLock { $0.map(\.after) } == [0, 3, 6], "each part read once, from the follower's place")
    }

    @Test("the growing last page is shared while the log stays as it is, and read again when it grows")
    func partialLastPage() throws {
        let short = FakeLog(lastSeq: 10)
        var pages = FeedPages(size: 4)
        #expect(seqs(try pages.lines(after: 8, lastSeq: 10, read: short.read)) == [9, 10])
        #expect(seqs(try pages.lines(after: 8, lastSeq: 10, read: short.read)) == [9, 10])
        #expect(try pages.lines(after: 10, lastSeq: 10, read: short.read).isEmpty)
        let longer = FakeLog(lastSeq: 11)
        #expect(seqs(try pages.lines(after: 8, lastSeq: 11, read: longer.read)) == [9, 10, 11])
        #expect(short.reads.withLock { $0.count } == 1)
        #expect(longer.reads.withLock { $0.count } == 1)
        // Any Int may come in as a position: nothing before the first line, nothing past the last.
        #expect(seqs(try pages.lines(after: -5, lastSeq: 11, read: longer.read)) == [1, 2, 3, 4])
        #expect(try pages.lines(after: .max, lastSeq: 11, read: longer.read).isEmpty)
    }

    @Test("kept pages stay under the byte limit, the least recently used going first")
    func byteLimit() throws {
        let log = FakeLog(lastSeq: 100)
        // Pages of 4 one- or two-byte lines: 4 to 8 bytes each; room for two pages of two-byte lines.
        var pages = FeedPages(size: 4, byteLimit: 16)
        for after in [12, 16, 12, 20, 12, 16] { _ = try pages.lines(after: after, lastSeq: 100, read: log.read) }
        // 12 stays (used again before 20 came), 16 went when 20 came, and is read again.
        #expect(log.reads.withLock { $0.map(\.after) } == [12, 16, 20, 16])
    }

    @Test("a follower reads the log page by page, from any place, and knows when it has caught up")
    func followerLines() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let count = EventStore.maxFeedPage * 2 + 500
        try writeLog((1...count).map { created($0, id: $0, "Note \($0)") }, to: path)
        let store = try await EventStore.open(path: path, logger: quiet)
        // The file's own lines, to compare with (not the store's reading of them).
        let stored = try lines(of: path).map { Array($0.utf8) }
        var read = try await store.followerLines(after: 0)
        #expect(read.lines.count == EventStore.maxFeedPage && !read.isCaughtUp)
        #expect(read.lines.map(Array.init) == Array(stored[0..<1000]))
        read = try await store.followerLines(after: 1500)
        #expect(read.lines.count == 500 && !read.isCaughtUp)
        #expect(read.lines.map(Array.init) == Array(stored[1500..<2000]))
        read = try await store.followerLines(after: 2400)
        #expect(read.lines.count == 100 && read.isCaughtUp)
        #expect(read.lines.last.map { Array($0) } == Array(try lines(of: path)[count - 1].utf8))
        _ = try await store.create(AnnouncementDraft(title: "One more"), by: "alice")
        read = try await store.followerLines(after: 2400)
        #expect(read.lines.count == 101 && read.isCaughtUp)
        #expect(read.pause == EventStore.busyFollowerPause, "101 new events: writers are busy, read less often")
        read = try await store.followerLines(after: 2450)
        #expect(read.lines.count == 51 && read.pause == EventStore.followerPause)
        read = try await store.followerLines(after: 0)
        #expect(read.pause == nil, "behind: read on at once")
        read = try await store.followerLines(after: count + 1)
        #expect(read.lines.isEmpty && read.isCaughtUp)
        await store.close()
    }

    @Test("followers' reads run in order on a thread of the lowest CPU priority")
    func idleWorker() async throws {
        let worker = IdleWorker()
        #if canImport(Glibc)
        let callerNiceness = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        #endif
        let seen = Mutex<[Int]>([])
        let niceness = Mutex<[Int32]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for job in 0..<100 {
                worker.async {
                    seen.withLock { $0.append(job) }
                    #if canImport(Glibc)
                    niceness.withLock { $0.append(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)) }
                    #endif
                    if job == 99 { done.resume() }
                }
            }
        }
        #expect(seen.withLock { $0 } == Array(0..<100))
        #if canImport(Glibc)
        #expect(niceness.withLock { $0 }.allSatisfy { $0 == 19 })
        // The caller's own thread is untouched.
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == callerNiceness)
        #endif
    }

    @Test("the followers' thread ends when idle and starts again with the next read")
    func idleWorkerRestarts() async throws {
        let worker = IdleWorker(idleTimeout: .milliseconds(20))
        for round in 1...2 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                worker.async { done.resume() }
            }
            #expect(worker.threadsStarted.load(ordering: .relaxed) == round)
            // A thread this low may wait a while for the CPU under a busy test run: up to 10 s.
            for _ in 0..<1000 where !worker.isIdle { try await Task.sleep(for: .milliseconds(10)) }
            #expect(worker.isIdle)
        }
    }

    @Test("a page of long lines stops at 8 MiB (at least one line, however long), and reading on, as a page or as a follower, gets the rest in order")
    func pagesCutByBytes() async throws {
        let folder = NSTemporaryDirectory() + "feed-bytes-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await EventStore.open(path: folder + "/log.jsonl", rules: ValidationRules(maxBodyBytes: 10 << 20), logger: quiet)
        // Ten lines of about 1.5 MiB, one of 9 MiB (over the limit alone), two short ones.
        for number in 1...10 { _ = try await store.create(AnnouncementDraft(title: "Long \(number)", body: String(repeating: "b", count: 3 << 19)), by: "alice") }
        _ = try await store.create(AnnouncementDraft(title: "Longest", body: String(repeating: "c", count: 9 << 20)), by: "alice")
        for number in 1...2 { _ = try await store.create(AnnouncementDraft(title: "Short \(number)"), by: "alice") }
        let first = try await store.eventLines(after: 0, limit: 1000)
        #expect(first.count == 5, "five lines of 1.5 MiB fit in 8 MiB, six do not")
        #expect(first.reduce(0) { $0 + $1.count + 1 } <= EventStore.maxFeedPageBytes)
        #expect(try await store.eventLines(after: 10, limit: 1000).count == 1, "a line over the limit comes alone")
        var pages: [[ArraySlice<UInt8>]] = []
        var seq = 0
        while seq < 13 {
            let page = try await store.eventLines(after: seq, limit: 1000)
            pages.append(page)
            seq += page.count
        }
        #expect(pages.map(\.count) == [5, 5, 1, 2])
        // Followers read the log in pages of 1000 events, shared: the first, complete now, is
        // one of long lines.
        for number in 1...990 { _ = try await store.create(AnnouncementDraft(title: "Short \(number + 2)"), by: "alice") }
        var followed: [Int] = []
        for _ in 0..<50 where followed.count < 1003 {
            let read = try await store.followerLines(after: followed.count)
            followed += try read.lines.map { try EventParser.parse($0).seq }
        }
        #expect(followed == Array(1...1003))
        await store.close()
    }
}
