import Dispatch
import Foundation
import Logging
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// A time limit on each test: a search index that never took a change in would hang, not fail.
@Suite(.timeLimit(.minutes(5))) struct StoreSearchTests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let atClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)

    func ids(_ store: EventStore, _ text: String) async throws -> [Int] {
        try await store.search(try #require(SearchQuery(text)), in: store.snapshot, offset: 0, limit: 100).items.map(\.id)
    }

    @Test("a search finds each write as soon as it is answered: creates, edits, deletes and erasures")
    func readsItsWrites() async throws {
        let folder = TemporaryFolder()
        let store = try await EventStore.open(path: folder.file("log.jsonl"), logger: quiet)
        store.startSearchIndex()
        let first = try await store.create(AnnouncementDraft(title: "Fire drill", body: "<p>Meet in the car park</p>"), by: "alice")
        #expect(try await ids(store, "drill") == [first.id])
        let second = try await store.create(AnnouncementDraft(title: "Car park closed", body: nil), by: "alice")
        #expect(try await ids(store, "car park") == [second.id, first.id], "the title match first")
        _ = try await store.update(id: first.id, AnnouncementPatch(title: "Evacuation drill", body: .set("<p>Meet on the lawn</p>")), by: "alice")
        #expect(try await ids(store, "car") == [second.id], "the edit took the old body's words out")
        #expect(try await ids(store, "lawn") == [first.id])
        try await store.delete(id: second.id, by: "alice")
        #expect(try await ids(store, "car") == [])
        _ = try await store.erase(id: first.id, by: "alice", reason: "test")
        #expect(try await ids(store, "evacuation") == [])
        await store.close()
    }

    @Test("after a restart from a snapshot, search and the times are as before")
    func restart() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        let created = try await first.create(AnnouncementDraft(title: "Quarterly results", body: "<p>Revenue grew</p>"), by: "alice")
        let edited = try await first.update(id: created.id, AnnouncementPatch(body: .set("<p>Revenue grew again</p>")), by: "alice")
        await first.close()
        #expect(edited.createdAt == created.createdAt)
        #expect(edited.updatedAt >= created.updatedAt)

        let second = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        #expect(second.snapshotSeq == 2, "the state came from the snapshot")
        let restored = second.snapshot.announcement(id: created.id)
        #expect(restored?.createdAt == created.createdAt)
        #expect(restored?.updatedAt == edited.updatedAt)
        #expect(try await ids(second, "again") == [created.id])
        await second.close()
    }

    @Test("the snapshot keeps the index: a start from it takes it and indexes again only what the lines after it changed")
    func snapshotKeepsTheIndex() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        first.startSearchIndex()
        let alpha = try await first.create(AnnouncementDraft(title: "Alpha", body: "<p>shared words</p>"), by: "alice")
        let beta = try await first.create(AnnouncementDraft(title: "Beta", body: "<p>shared</p>"), by: "alice")
        #expect(try await ids(first, "alpha") == [alpha.id])
        await first.close()

        // Lines after the snapshot: written by a store that writes no snapshot.
        let second = try await EventStore.open(path: path, snapshots: .off, logger: quiet)
        #expect(second.loadedSearchIndex.withLock { $0 == nil }, "a store that reads no snapshot builds its index")
        _ = try await second.update(id: alpha.id, AnnouncementPatch(title: "Gamma"), by: "alice")
        try await second.delete(id: beta.id, by: "alice")
        let delta = try await second.create(AnnouncementDraft(title: "Delta", body: "<p>shared</p>"), by: "alice")
        await second.close()

        let third = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        #expect(third.loadedSearchIndex.withLock { $0?.seq } == 2, "the index came with the snapshot")
        #expect(third.loadedSearchIndex.withLock { $0?.index.wordCount } == 4, "alpha, beta, shared, words")
        #expect(try await ids(third, "alpha") == [])
        #expect(try await ids(third, "gamma") == [alpha.id])
        #expect(try await ids(third, "beta") == [])
        #expect(try await ids(third, "shared") == [delta.id, alpha.id])
        #expect(try await ids(third, "words") == [alpha.id])
        await third.close()
    }

    @Test("a word in thousands of announcements (its set a bitmap) comes back from the snapshot whole")
    func snapshotKeepsBitmaps() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let first = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        first.startSearchIndex()
        let count = PostingSet.listLimit + 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for number in stride(from: writer, to: count, by: 8) {
                        _ = try await first.create(AnnouncementDraft(title: "Common \(number)", body: number % 2 == 0 ? "<p>even</p>" : nil), by: "alice")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await first.search(try #require(SearchQuery("common")), in: first.snapshot, offset: 0, limit: 1).total == count)
        await first.close()
        let second = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        #expect(second.loadedSearchIndex.withLock { $0 != nil }, "the snapshot held the index")
        let common = try await second.search(try #require(SearchQuery("common")), in: second.snapshot, offset: 0, limit: 3)
        #expect(common.total == count)
        #expect(common.items.map(\.id) == [count, count - 1, count - 2])
        #expect(try await second.search(try #require(SearchQuery("even")), in: second.snapshot, offset: 0, limit: 1).total == (count + 1) / 2)
        await second.close()
    }

    @Test("writes hand their changes to the indexer's thread a batch at a time; a search asks for them at once")
    func batchesTheIndexing() async throws {
        let indexer = SearchIndexer(batch: 4)
        let empty = ReadModel()
        indexer.start(from: { empty }, loaded: { nil }, changedSince: { _ in [] })
        func change(_ id: Int, _ title: String) -> SearchIndexer.Change {
            .init(id: id, old: nil, new: Announcement(id: id, created: AnnouncementDraft(title: title, body: nil), revision: id, by: "alice", at: Timestamp(millisecondsSince1970: 0)))
        }
        func found(_ word: String, covering seq: Int) async throws -> [Int]? {
            let query = try #require(SearchQuery(word))
            return await indexer.search(covering: seq) { $0.search(query, offset: 0, limit: 10).ids }
        }
        for seq in 1...3 { indexer.publish(seq: seq) { [change(seq, "Notice \(seq)")] } }
        #expect(indexer.flushes.load(ordering: .relaxed) == 0, "three changes wait for the fourth")
        #expect(try await found("notice", covering: 3) == [3, 2, 1], "a search takes them in at once")
        #expect(indexer.flushes.load(ordering: .relaxed) == 1)
        for seq in 4...7 { indexer.publish(seq: seq) { [change(seq, "Memo \(seq)")] } }
        #expect(indexer.flushes.load(ordering: .relaxed) == 2, "the fourth change waiting asks for a flush")
        #expect(try await found("memo", covering: 7) == [7, 6, 5, 4])
        #expect(indexer.flushes.load(ordering: .relaxed) == 2, "the search found them indexed (or in the flush asked for)")
        // A search for a state whose change is not published yet waits for it, and gets it at once.
        async let late = found("later", covering: 8)
        try await Task.sleep(for: .milliseconds(50))
        indexer.publish(seq: 8) { [change(8, "Later")] }
        #expect(try await late == [8])
    }

    @Test("a snapshot's copy of the index holds the changes still waiting in the backlog up to its seq, and none after")
    func copyTakesTheBacklog() async throws {
        let indexer = SearchIndexer(batch: 64)
        let empty = ReadModel()
        indexer.start(from: { empty }, loaded: { nil }, changedSince: { _ in [] })
        func change(_ id: Int) -> SearchIndexer.Change {
            .init(id: id, old: nil, new: Announcement(id: id, created: AnnouncementDraft(title: "Notice \(id)", body: nil), revision: id, by: "alice", at: Timestamp(millisecondsSince1970: 0)))
        }
        let query = try #require(SearchQuery("notice"))
        for seq in 1...3 { indexer.publish(seq: seq) { [change(seq)] } }
        let atThree = try #require(indexer.copy(at: 3)).wait()
        #expect(atThree?.search(query, offset: 0, limit: 10).ids == [3, 2, 1])
        #expect(indexer.flushes.load(ordering: .relaxed) == 0, "no flush asked for: the copy took them")
        for seq in 4...5 { indexer.publish(seq: seq) { [change(seq)] } }
        let atFour = try #require(indexer.copy(at: 4)).wait()
        #expect(atFour?.search(query, offset: 0, limit: 10).ids == [4, 3, 2, 1], "seq 5 is not in a copy at 4")
        #expect(await indexer.search(covering: 5) { $0.search(query, offset: 0, limit: 10).ids } == [5, 4, 3, 2, 1])
    }

    @Test("a batch's changes are handed over without waiting for the index, whoever holds it (the indexer taking in a batch, a search reading)")
    func publishWaitsNotForTheIndex() async throws {
        let indexer = SearchIndexer(batch: 1)
        let empty = ReadModel()
        indexer.start(from: { empty }, loaded: { nil }, changedSince: { _ in [] })
        let changes = (1...3).map { id in
            SearchIndexer.Change(id: id, old: nil, new: Announcement(id: id, created: AnnouncementDraft(title: "Notice \(id)", body: nil), revision: id, by: "alice", at: Timestamp(millisecondsSince1970: 0)))
        }
        let query = try #require(SearchQuery("notice"))
        // A search holds the index until told to let go.
        let holding = DispatchSemaphore(value: 0)
        let letGo = DispatchSemaphore(value: 0)
        let reader = Task.detached { await indexer.search(covering: 0) { _ in holding.signal(); _ = letGo.wait(timeout: .now() + 60) } }
        // Meanwhile a commit hands over changes (a flush asked for at each: batch 1), on a thread
        // of its own: it returns while the index is held. (Every wait here is on threads of
        // their own, off the cooperative pool, whose few threads the other suites need.)
        let (held, returned) = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Bool), Never>) in
            Thread {
                guard holding.wait(timeout: .now() + 60) == .success else {
                    letGo.signal()
                    return continuation.resume(returning: (false, false))
                }
                let handedOver = DispatchSemaphore(value: 0)
                Thread {
                    for change in changes { indexer.publish(seq: change.id) { [change] } }
                    handedOver.signal()
                }.start()
                let returned = handedOver.wait(timeout: .now() + 10) == .success
                letGo.signal()
                // (Without the fix, it returns once the search lets go.)
                if !returned { handedOver.wait() }
                continuation.resume(returning: (true, returned))
            }.start()
        }
        _ = await reader.value
        #expect(held, "the search held the index within a minute")
        #expect(returned, "publish returned while a search held the index")
        #expect(await indexer.search(covering: 3) { $0.search(query, offset: 0, limit: 10).ids } == [3, 2, 1])
    }

    @Test("a search that waits longer than the index takes is refused as not ready, not answered wrong")
    func notReady() async throws {
        let indexer = SearchIndexer(maxWait: .milliseconds(50))
        // Never started: it covers nothing, and a search of seq 1 waits in vain.
        let result = await indexer.search(covering: 1) { _ in true }
        #expect(result == nil)
    }
}
