/// The state the log folds into: every live announcement, by id and by title.
///
/// It is a value: a copy is an immutable snapshot that readers keep while writers go on, and copies
/// share storage (see `SortedChunks`). Both read models are views of it: v1 (`Announcement`, with
/// the body) and v2 (`AnnouncementSummary`); each body is held once.
public struct ReadModel: Sendable {
    /// The seq of the last applied event; 0 for an empty log.
    public package(set) var seq = 0
    /// The time of the last applied event.
    public package(set) var lastAt: Timestamp?
    /// The largest id ever created (deleted ones included); the next `created` takes `maxId + 1`.
    public package(set) var maxId = 0

    /// The announcements whose texts were erased, with the seq of each one's erased event.
    public package(set) var erased: [Int: Int] = [:]

    package var byId = SortedChunks<IdOrder>()
    /// The title index; nil while a replay defers it (see `buildTitleIndex()`).
    package var byTitle: SortedChunks<TitleOrder>? = SortedChunks<TitleOrder>()

    public init() {}

    /// The number of live announcements.
    public var count: Int { byId.count }

    /// The live announcement with `id`.
    public func announcement(id: Int) -> Announcement? {
        byId.element(for: id)
    }

    /// Every live announcement, by id.
    public var announcements: some Sequence<Announcement> { byId.elements }

    // MARK: - Folding events

    /// Applies one event: the single code path for replay and for live writes.
    /// Throws, changing nothing, when the event does not follow from the current state.
    public mutating func apply(_ event: consuming Event) throws(ApplyProblem) {
        let (eventSeq, id, at, by) = (event.seq, event.id, event.at, event.by)
        guard eventSeq == seq + 1 else {
            throw ApplyProblem(eventSeq <= seq
                ? "seq \(eventSeq) repeats or goes back (the previous line has seq \(seq))"
                : "seq \(eventSeq) leaves a gap (expected \(seq + 1))")
        }
        switch event.takeChange() {
        case .created(let draft):
            guard id > maxId else {
                throw ApplyProblem("created reuses id \(id) (ids are never reused; the next id is \(maxId + 1))")
            }
            guard id == maxId + 1 else {
                throw ApplyProblem("created takes id \(id), but the next id is \(maxId + 1)")
            }
            let created = Announcement(id: id, created: draft, revision: eventSeq, by: by, at: at)
            byId.upsert(created)
            indexTitle(created.title, id: id)
            maxId = id
        case .edited(let patch):
            var oldTitle: String?
            let found = byId.modify(id) { oldTitle = $0.apply(patch, revision: eventSeq, at: at) }
            guard found else { throw missing(id, verb: "edits") }
            if let oldTitle, let title = patch.title {
                indexTitle(oldTitle, id: id, removing: true)
                indexTitle(title, id: id)
            }
        case .deleted:
            guard let old = byId.remove(id) else { throw missing(id, verb: "deletes") }
            indexTitle(old.title, id: id, removing: true)
        case .erased:
            guard id >= 1, id <= maxId else { throw ApplyProblem("erases announcement \(id), which was never created") }
            if let earlier = erased[id] { throw ApplyProblem("erases announcement \(id) again (event \(earlier) erased it)") }
            // Erasing a live announcement ends it, as a delete does.
            if let old = byId.remove(id) { indexTitle(old.title, id: id, removing: true) }
            erased[id] = eventSeq
        case .sealed(.created, _):
            // Its title and body are gone: it stands with none until its erased event removes it.
            guard id == maxId + 1 else {
                throw ApplyProblem("created takes id \(id), but the next id is \(maxId + 1)")
            }
            byId.upsert(Announcement(id: id, title: "", bodyText: nil, revision: eventSeq, createdBy: by, createdAt: at, updatedAt: at))
            indexTitle("", id: id)
            maxId = id
        case .sealed:
            let found = byId.modify(id) {
                $0.revision = eventSeq
                $0.updatedAt = at
            }
            guard found else { throw missing(id, verb: "edits") }
        }
        seq = eventSeq
        lastAt = at
    }

    /// Takes announcement `id` out of the state, as if it had never been: what a past state shows
    /// of an announcement erased since (its texts are gone). Nothing else changes.
    package mutating func leaveOut(id: Int) {
        if let old = byId.remove(id) { indexTitle(old.title, id: id, removing: true) }
    }

    /// Adds to the title index (when it is kept) the key of announcement `id` titled `title`, or
    /// with `removing` removes it. Stored keys' titles, when needed, are looked up in `byId`.
    private mutating func indexTitle(_ title: String, id: Int, removing: Bool = false) {
        guard var titles = byTitle else { return }
        byTitle = nil  // `titles` now holds the only reference, and changes in place
        let byId = self.byId
        let probe = TitleProbe(title: title, id: id)
        let place: SortedChunks<TitleOrder>.Probe = { probe.order(of: $0) { byId.element(for: $0)?.title } }
        if removing {
            titles.remove(place)
        } else {
            titles.upsert(probe.key, place)
        }
        byTitle = titles
    }

    private func missing(_ id: Int, verb: String) -> ApplyProblem {
        ApplyProblem(id <= maxId
            ? "\(verb) announcement \(id), which was deleted"
            : "\(verb) announcement \(id), which was never created")
    }

    /// The title keys of one of the two halves of the announcements (by id), sorted: what
    /// `buildTitleIndex()` sorts on two threads after a replay that deferred the title index.
    package func sortedTitleProbes(half: Int) -> [TitleProbe] {
        let middle = byId.count / 2
        return byId.elements(in: half == 0 ? 0..<middle : middle..<byId.count).map(TitleProbe.init).sorted()
    }

    /// Builds the title index from both halves' sorted keys (see `sortedTitleProbes(half:)`), merged:
    /// one sort instead of n inserts.
    package mutating func setTitleIndex(merging left: [TitleProbe], _ right: [TitleProbe]) {
        guard byTitle == nil else { return }
        var merged: [TitleKey] = []
        merged.reserveCapacity(left.count + right.count)
        var l = 0, r = 0
        while l < left.count, r < right.count {
            if right[r] < left[l] { merged.append(right[r].key); r += 1 } else { merged.append(left[l].key); l += 1 }
        }
        merged.append(contentsOf: left[l...].map(\.key))
        merged.append(contentsOf: right[r...].map(\.key))
        byTitle = SortedChunks(sorted: merged)
    }

    /// Whether the title index is kept (not deferred).
    package var hasTitleIndex: Bool { byTitle != nil }

    /// Stops maintaining the title index until `buildTitleIndex()`: replay builds it once at the end.
    package mutating func deferTitleIndex() {
        byTitle = nil
    }
}

/// Why an event cannot be applied to the state before it.
public struct ApplyProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

// MARK: - Orders

/// Announcements by id.
package enum IdOrder: ChunkOrder {
    package static func key(of element: Announcement) -> Int { element.id }
}

/// The title index: keys in title order (see `TitleKey`).
package enum TitleOrder: ChunkOrder {
    package static func key(of element: TitleKey) -> TitleKey { element }
}
