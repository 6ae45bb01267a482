import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres
@testable import AnnouncementsStore

/// Several stores on one table, as several nodes run them: the writer role moves to whichever
/// has writes, each takes in the others' lines, and the log stays one chain without gaps.
@Suite(.enabled(if: PostgresTesting.isAvailable, PostgresTesting.skipReason))
struct SharedLogTests {
    @Test("writes through three stores on one table make one log without gaps, which each of them holds")
    func writesThroughEveryStore() async throws {
        let place = try Backend.postgres.makePlace()
        let stores = [try await place.open(), try await place.open(), try await place.open()]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (node, store) in stores.enumerated() {
                for writer in 0..<6 {
                    group.addTask {
                        for write in 0..<10 {
                            let created = try await store.create(AnnouncementDraft(title: "n\(node)-w\(writer)-\(write)"), by: "node\(node)")
                            if write % 3 == 0 {
                                _ = try await store.update(id: created.id, AnnouncementPatch(title: "edited by \(node)"), by: "node\(node)", expectedRevision: created.revision)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let replay = try await place.replay()
        // 180 creates and 72 edits.
        #expect(replay.model.seq == 252)
        for store in stores {
            #expect(await store.waitUntilSeq(252, upTo: .seconds(30)))
            #expect(Array(store.snapshot.announcements) == Array(replay.model.announcements))
            #expect(store.head?.hash == replay.lastHash)
        }
        // Every store reads every line back, whoever wrote it.
        #expect(try await stores[0].eventLines(after: 0, limit: 300).count == 252)
        #expect(try await stores[2].historyLines(id: 1)?.isEmpty == false)
        for store in stores { await store.close() }
    }

    @Test("a store takes in what another appends without being asked, and Min-Seq's wait gets it at once")
    func following() async throws {
        let place = try Backend.postgres.makePlace()
        let writer = try await place.open()
        let follower = try await place.open()
        let created = try await writer.create(AnnouncementDraft(title: "Seen elsewhere"), by: "alice")
        // Asked: the follower reads the table now.
        #expect(await follower.waitUntilSeq(created.revision, upTo: .seconds(30)))
        #expect(follower.snapshot.announcement(id: created.id)?.title == "Seen elsewhere")
        // Not asked: the notification (or the look four times a second) brings it.
        _ = try await writer.update(id: created.id, AnnouncementPatch(title: "Changed elsewhere"), by: "alice")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await follower.waitForEvents(after: 1) }
            group.addTask { try? await Task.sleep(for: .seconds(30)) }
            await group.next()
            group.cancelAll()
        }
        #expect(follower.snapshot.announcement(id: created.id)?.title == "Changed elsewhere")
        // An idempotency key used through one store is known to the other.
        _ = try await writer.create(AnnouncementDraft(title: "Keyed"), by: "alice", key: "k-1")
        #expect(await follower.waitUntilSeq(3, upTo: .seconds(30)))
        let repeated = try await follower.create(AnnouncementDraft(title: "Keyed"), by: "alice", key: "k-1")
        #expect(repeated.id == 2)
        #expect(try await place.replay().model.seq == 3)
        await writer.close()
        await follower.close()
    }

    @Test("two stores opened at once on an empty table seed it once")
    func seedOnce() async throws {
        let place = try Backend.postgres.makePlace()
        let seed = [AnnouncementDraft(title: "Welcome"), AnnouncementDraft(title: "Lunch")]
        async let first = place.open(seed: seed)
        async let second = place.open(seed: seed)
        let stores = try await [first, second]
        #expect(try await place.replay().model.announcements.map(\.title) == ["Welcome", "Lunch"])
        for store in stores {
            #expect(await store.waitUntilSeq(2, upTo: .seconds(30)))
            #expect(store.snapshot.seq == 2)
            await store.close()
        }
    }

    @Test("a writer that keeps the role gives it up when another asks, between its batches")
    func roleMoves() async throws {
        let place = try Backend.postgres.makePlace()
        let busy = try await place.open()
        let other = try await place.open()
        _ = try await busy.create(AnnouncementDraft(title: "Holds the role"), by: "alice")
        let log = try #require(busy.log as? PostgresLog)
        #expect(log.holdsWriterRole)
        // The other store asks for the role while the busy one goes on writing.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for write in 0..<40 { _ = try await busy.create(AnnouncementDraft(title: "busy \(write)"), by: "alice") }
            }
            group.addTask {
                for write in 0..<5 { _ = try await other.create(AnnouncementDraft(title: "other \(write)"), by: "bob") }
            }
            try await group.waitForAll()
        }
        let titles = try await place.replay().model.announcements.map(\.title)
        #expect(titles.count == 46)
        #expect(titles.filter { $0.hasPrefix("other") }.count == 5)
        await busy.close()
        await other.close()
    }
}
