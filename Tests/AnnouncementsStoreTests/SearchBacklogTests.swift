import Testing
@testable import AnnouncementsStore

/// When the search index's backlog asks for a flush, and what each flush takes.
@Suite struct SearchBacklogTests {
    @Test("a flush is asked for once per batch of changes no flush covers, not again for each change after it")
    func oneFlushPerBatch() {
        var backlog = SearchBacklog<Int>(batch: 3)
        #expect(backlog.add(seq: 1, changes: [1], searchWaits: false) == nil)
        #expect(backlog.add(seq: 2, changes: [2], searchWaits: false) == nil)
        #expect(backlog.add(seq: 3, changes: [3], searchWaits: false) == 3, "the third change asks")
        #expect(backlog.add(seq: 4, changes: [4], searchWaits: false) == nil, "the flush asked for has not run: one change after it")
        #expect(backlog.add(seq: 5, changes: [5, 6], searchWaits: false) == 5, "three changes after the flush asked for")
        #expect(backlog.take(upTo: 3).map(\.seq) == [1, 2, 3])
        #expect(backlog.take(upTo: 5).map(\.seq) == [4, 5])
        #expect(backlog.unasked == 0)
    }

    @Test("a waiting search asks for everything published, once; a copy's flush takes only up to its seq")
    func searchesAndCopies() {
        var backlog = SearchBacklog<Int>(batch: 64)
        _ = backlog.add(seq: 1, changes: [1], searchWaits: false)
        _ = backlog.add(seq: 2, changes: [2], searchWaits: false)
        #expect(backlog.searchWaits() == 2)
        #expect(backlog.searchWaits() == nil, "asked for already")
        #expect(backlog.add(seq: 3, changes: [3], searchWaits: true) == 3, "published while a search waits")
        _ = backlog.add(seq: 4, changes: [4], searchWaits: false)
        // A copy at seq 1 (a snapshot's) runs before the flushes asked for: it takes only seq 1.
        #expect(backlog.take(upTo: 1).map(\.seq) == [1])
        #expect(backlog.take(upTo: 3).map(\.seq) == [2, 3])
        #expect(backlog.unasked == 1, "seq 4 waits, no flush asked for it")
        #expect(backlog.take(upTo: 4).map(\.seq) == [4], "a copy at 4 takes it")
        #expect(backlog.unasked == 0)
        #expect(backlog.searchWaits() == nil, "nothing left to ask for")
    }
}
