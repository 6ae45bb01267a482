import Dispatch
import Synchronization

/// The state the log folds into: every live announcement, by id and by title.
///
/// It is a value: a copy is an immutable snapshot that readers keep while writers go on, and copies
/// share storage (see `SortedChunks`). Both read models are views of it: v1 (`Announcement`, with
/// the body) and v2 (`AnnouncementSummary`); each body is held once.
public struct ReadModel: Sendable {
    /// The seq of the last applied event; 0 for an empty log.
    public internal(set) var seq = 0
    /// The time of the last applied event.
    public internal(set) var lastAt: Timestamp?
    /// The largest id ever created (deleted ones included); the next `created` takes `maxId + 1`.
    public internal(set) var maxId = 0

    var byId = SortedChunks<IdOrder>()
    /// The title index; nil while a replay defers it (see `buildTitleIndex()`).
    var byTitle: SortedChunks<TitleOrder>? = SortedChunks<TitleOrder>()

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
        let (eventSeq, id, at) = (event.seq, event.id, event.at)
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
            let created = Announcement(id: id, created: draft, revision: eventSeq)
            byId.upsert(created)
            indexTitle(created.title, id: id)
            maxId = id
        case .edited(let patch):
            var oldTitle: String?
            let found = byId.modify(id) { oldTitle = $0.apply(patch, revision: eventSeq) }
            guard found else { throw missing(id, verb: "edits") }
            if let oldTitle, let title = patch.title {
                indexTitle(oldTitle, id: id, removing: true)
                indexTitle(title, id: id)
            }
        case .deleted:
            guard let old = byId.remove(id) else { throw missing(id, verb: "deletes") }
            indexTitle(old.title, id: id, removing: true)
        }
        seq = eventSeq
        lastAt = at
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

    /// Builds the title index after a replay that deferred it: one sort instead of n inserts, with
    /// each half of the announcements keyed and sorted on its own thread, then merged.
    public mutating func buildTitleIndex() {
        guard byTitle == nil else { return }
        let byId = self.byId
        let middle = byId.count / 2
        let halves = [0..<middle, middle..<byId.count]
        let sorted = Mutex<[[TitleProbe]]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let entries = byId.elements(in: halves[half]).map(TitleProbe.init).sorted()
            sorted.withLock { $0[half] = entries }
        }
        let (left, right) = sorted.withLock { ($0[0], $0[1]) }
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

    /// Stops maintaining the title index until `buildTitleIndex()`: replay builds it once at the end.
    mutating func deferTitleIndex() {
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
enum IdOrder: ChunkOrder {
    static func key(of element: Announcement) -> Int { element.id }
}

/// The title index: keys in title order (see `TitleKey`).
enum TitleOrder: ChunkOrder {
    static func key(of element: TitleKey) -> TitleKey { element }
}
