import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct ReadModelTests {
    func model(_ events: [Event]) throws -> ReadModel {
        var model = ReadModel()
        for event in events { try model.apply(event) }
        return model
    }

    @Test("folds creates, edits and deletes into the live announcements")
    func folds() throws {
        let model = try self.model(sampleEvents)
        #expect(model.seq == 7)
        #expect(model.maxId == 3)
        #expect(model.count == 2)
        #expect(model.announcement(id: 1) == Announcement(id: 1, title: "Welcome aboard", body: "<p>Hello, world</p>", revision: 4, createdBy: "seed", createdAt: at(1), updatedAt: at(4)))
        #expect(model.announcement(id: 2) == nil)
        #expect(model.announcement(id: 3) == Announcement(id: 3, title: "Parking", body: nil, revision: 7, createdBy: "alice", createdAt: at(6), updatedAt: at(7)))
    }

    @Test("refuses events that do not follow, changing nothing", arguments: [
        (created(9, id: 4, "gap"), "leaves a gap (expected 8)"),
        (created(7, id: 4, "repeat"), "repeats or goes back"),
        (created(8, id: 3, "reuse"), "created reuses id 3"),
        (created(8, id: 2, "reuse deleted"), "created reuses id 2"),
        (created(8, id: 9, "skip"), "but the next id is 4"),
        (edited(8, id: 2, title: "x"), "edits announcement 2, which was deleted"),
        (edited(8, id: 99, title: "x"), "edits announcement 99, which was never created"),
        (deleted(8, id: 2), "deletes announcement 2, which was deleted"),
    ])
    func refuses(event: Event, message: String) throws {
        var model = try self.model(sampleEvents)
        #expect {
            try model.apply(event)
        } throws: { error in
            (error as? ApplyProblem)?.message.contains(message) == true
        }
        #expect(model.seq == 7)
        #expect(model.count == 2)
    }

    @Test("a copy is a snapshot that later events do not change")
    func snapshots() throws {
        var model = try self.model(Array(sampleEvents.prefix(2)))
        let snapshot = model
        try model.apply(edited(3, id: 1, title: "Changed"))
        try model.apply(deleted(4, id: 2))
        #expect(snapshot.announcement(id: 1)?.title == "Welcome")
        #expect(snapshot.count == 2)
        #expect(model.announcement(id: 1)?.title == "Changed")
        #expect(model.count == 1)
    }

    /// 1,000 announcements with titles in a scrambled order, a third of them deleted.
    func bigModel() throws -> ReadModel {
        var model = ReadModel()
        var seq = 0
        for id in 1...1000 {
            seq += 1
            try model.apply(created(seq, id: id, "Title \((id * 7919) % 1000)", body: id.isMultiple(of: 2) ? "b\(id)" : nil))
        }
        for id in stride(from: 3, through: 1000, by: 3) {
            seq += 1
            try model.apply(deleted(seq, id: id))
        }
        return model
    }

    @Test("pages by id in both orders")
    func pagesById() throws {
        let model = try bigModel()
        let live = (1...1000).filter { !$0.isMultiple(of: 3) }
        #expect(model.count == live.count)
        let page = model.announcements(PageQuery(offset: 100, limit: 10))
        #expect(page.items.map(\.id) == Array(live[100..<110]))
        #expect(page.total == live.count)
        let descending = model.announcements(PageQuery(offset: 5, limit: 3, order: .desc))
        #expect(descending.items.map(\.id) == Array(live.reversed()[5..<8]))
        #expect(model.announcements(PageQuery(offset: 5000, limit: 10)).items.isEmpty)
        #expect(model.summaries(PageQuery(offset: 0, limit: 2)).items == [AnnouncementSummary(id: 1, title: "Title 919"), AnnouncementSummary(id: 2, title: "Title 838")])
    }

    @Test("sorts by title ignoring case, then by id, with or without the index")
    func sortsByTitle() throws {
        var model = ReadModel()
        let titles = ["banana", "Apple", "cherry", "apple", "Banana split", "éclair"]
        for (index, title) in titles.enumerated() {
            try model.apply(created(index + 1, id: index + 1, title))
        }
        let expected = [2, 4, 1, 5, 3, 6]  // Apple(2), apple(4), banana, Banana split, cherry, éclair
        #expect(model.announcements(PageQuery(limit: 10, sort: .title)).items.map(\.id) == expected)
        #expect(model.announcements(PageQuery(limit: 10, sort: .title, order: .desc)).items.map(\.id) == expected.reversed())
        model.deferTitleIndex()
        #expect(model.announcements(PageQuery(limit: 10, sort: .title)).items.map(\.id) == expected)
        model.buildTitleIndex()
        #expect(model.announcements(PageQuery(offset: 1, limit: 2, sort: .title)).items.map(\.id) == [4, 1])
    }

    @Test("the maintained title index equals one built from scratch after renames and deletes")
    func titleIndexMaintained() throws {
        var model = try bigModel()
        var seq = model.seq
        for id in stride(from: 1, through: 1000, by: 5) where model.announcement(id: id) != nil {
            seq += 1
            try model.apply(edited(seq, id: id, title: "Renamed \(1000 - id)"))
        }
        var rebuilt = model
        rebuilt.deferTitleIndex()
        rebuilt.buildTitleIndex()
        let all = PageQuery(limit: 2000, sort: .title)
        #expect(model.announcements(all).items.map(\.id) == rebuilt.announcements(all).items.map(\.id))
        let titles = model.announcements(all).items.map { $0.title.lowercased() }
        #expect(titles == titles.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test("titles alike in their first 56 bytes are ordered by the rest of the title, through creates, renames and deletes")
    func longTitlesInOrder() throws {
        // 60 bytes of a shared beginning: keys tie on their first 56 bytes, the rest decides.
        let stem = "Quarterly all-hands meeting of the engineering department: "
        let endings = ["part 2", "Part 1", "part 10", "", "PART 3", "part 1", "écoute", "Part 2", "part 1 (again)"]
        var model = ReadModel()
        var seq = 0
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        func title() -> String {
            switch next(4) {
            case 0: String(stem.prefix(56)) + endings[next(endings.count)]
            case 1: String(stem.prefix(50 + next(10)))
            default: (next(2) == 0 ? stem : stem.uppercased()) + endings[next(endings.count)]
            }
        }
        for id in 1...200 {
            seq += 1
            try model.apply(created(seq, id: id, title()))
        }
        for _ in 0..<300 {
            let id = 1 + next(200)
            guard model.announcement(id: id) != nil else { continue }
            seq += 1
            try model.apply(next(5) == 0 ? deleted(seq, id: id) : edited(seq, id: id, title: title()))
        }
        let reference = model.announcements.sorted {
            let (a, b) = (Array($0.title.lowercased().utf8), Array($1.title.lowercased().utf8))
            return a == b ? $0.id < $1.id : a.lexicographicallyPrecedes(b)
        }.map(\.id)
        let all = PageQuery(limit: 500, sort: .title)
        #expect(model.announcements(all).items.map(\.id) == reference)
        var rebuilt = model
        rebuilt.deferTitleIndex()
        #expect(rebuilt.announcements(all).items.map(\.id) == reference)
        rebuilt.buildTitleIndex()
        #expect(rebuilt.announcements(all).items.map(\.id) == reference)
        #expect(rebuilt.announcements(PageQuery(limit: 500, sort: .title, order: .desc)).items.map(\.id) == reference.reversed())
    }
}
