import AnnouncementsDomain
import Dispatch
import Synchronization

/// Keeps the search index (`SearchIndex`) up to date with the published state, on a thread of its
/// own: the committer hands over what each batch changed and goes on; the words of the new texts
/// are found and indexed there, never in a writer's wait. The changes are indexed a batch at a
/// time (`SearchBacklog`: one hand-over to that thread per batch, not per write), and at once
/// when a search needs them.
///
/// The index is built from the state when it is started (`start(from:)`: a server starts it, a
/// command that only writes or reads the log never pays for it), then follows every published
/// change. A search waits until the index covers the state it reads (`SearchProgress`), at most
/// `maxWait`.
///
/// Two locks: the committer, handing over a batch's changes, takes only the short one (`state`:
/// the backlog and who waits); the index itself has its own (`indexed`), held by the indexer's
/// thread while it takes in a published state's changes (a batch of writes, each body word by
/// word) and by a search while it reads. So a commit never waits for the index, whoever holds it.
final class SearchIndexer: Sendable {
    private struct State {
        var progress = SearchProgress<CheckedContinuation<Bool, Never>>()
        var backlog: SearchBacklog<Change>
        var isStarted = false
    }

    /// The index and the seq of the state it covers (nil until it is built): written on the
    /// indexer's thread alone, one published state at a time, before `progress` says so.
    private struct Indexed {
        var index = SearchIndex()
        var seq: Int?
    }

    /// What a batch changed in one announcement: its state before and after (nil: not live).
    struct Change: Sendable {
        var id: Int
        var old: Announcement?
        var new: Announcement?
    }

    private let state: Mutex<State>
    private let indexed = Mutex(Indexed())
    private let worker = IdleWorker(lowersPriority: false)
    /// The longest a search waits for the index to cover its state (the first build of a large log
    /// takes seconds).
    let maxWait: Duration
    /// How many flushes of the backlog were asked for: the hand-overs to the indexer's thread that
    /// writes cost (for tests).
    let flushes = Atomic(0)

    /// With `batch`, how many changes wait for their flush unless a search needs them sooner.
    init(maxWait: Duration = .seconds(10), batch: Int = 64) {
        self.maxWait = maxWait
        self.state = Mutex(State(backlog: SearchBacklog(batch: batch)))
    }

    /// Builds the index in the background, once, from the state `current` reads (the published
    /// one, read while no change can slip between it and the changes that follow it, which are
    /// indexed after it in order). From a snapshot's index (`loaded`, at its seq) when there is
    /// one: the announcements the lines after it changed (`changedSince` names them) are indexed
    /// again, the rest is as the snapshot has it.
    func start(from current: () -> ReadModel, loaded: () -> LoadedSearchIndex?, changedSince: (Int) -> [Int]) {
        state.withLock { state in
            guard !state.isStarted else { return }
            state.isStarted = true
            let model = current()
            let loaded = loaded()
            let changed = loaded.map { changedSince($0.seq) } ?? []
            // Queued while the lock is held: before any change `publish` queues after it.
            worker.async { [self] in
                let index = Self.build(model, from: loaded, changed: changed)
                self.indexed.withLock { $0 = Indexed(index: index, seq: model.seq) }
                self.covered(model.seq)
            }
        }
    }

    /// The index of `model`: `loaded` with the `changed` announcements taken out and indexed as
    /// they are now, or else built from every live announcement.
    private static func build(_ model: ReadModel, from loaded: LoadedSearchIndex?, changed: [Int]) -> SearchIndex {
        guard var index = loaded?.index else { return model.searchIndex() }
        var gone = DenseBits(maxId: max(model.maxId, index.maxId))
        for id in changed where id >= 0 && id <= max(model.maxId, index.maxId) { gone.insert(id) }
        index.removeAll(in: gone)
        for id in changed {
            if let announcement = model.announcement(id: id) { index.add(announcement) }
        }
        index.count = model.count
        return index
    }

    /// A copy of the index as it is once it covers exactly `seq` (the changes published up to it
    /// taken in, none after): what a snapshot of the state at `seq` stores. Nil when the index is
    /// not kept (never started); the copy itself is nil when the index went past `seq` first.
    func copy(at seq: Int) -> PendingCopy? {
        state.withLock { state in
            guard state.isStarted else { return nil }
            let pending = PendingCopy()
            // Queued behind the flushes asked for so far; it takes the changes up to `seq` itself.
            worker.async { [self] in
                indexBacklog(upTo: seq)
                pending.fulfil(self.indexed.withLock { $0.seq == seq ? $0.index : nil })
            }
            return pending
        }
    }

    /// A copy of the index a snapshot writer waits for (on its own thread). It is waited for once:
    /// a later wait returns what the first one got at once.
    final class PendingCopy: Sendable {
        private struct State {
            var copy: SearchIndex?
            var isSettled = false
            var timedOut = false
        }

        private let state = Mutex(State())
        private let done = DispatchSemaphore(value: 0)

        fileprivate func fulfil(_ index: SearchIndex?) {
            state.withLock { if !$0.timedOut { $0.copy = index } }
            done.signal()
        }

        /// The copy, waiting at most `timeout` for it the first time; nil when it did not come
        /// then, or the index went past the snapshot's seq.
        func wait(timeout: DispatchTimeInterval = .seconds(60)) -> SearchIndex? {
            let isFirst = state.withLock { state in
                defer { state.isSettled = true }
                return !state.isSettled
            }
            if isFirst {
                let arrived = done.wait(timeout: .now() + timeout) == .success
                return state.withLock { state in
                    if !arrived { state.timedOut = true }
                    return arrived ? state.copy : nil
                }
            }
            return state.withLock { $0.copy }
        }
    }

    /// Indexes what the state at `seq` changed, as `changes` gives it: asked for only once the
    /// index is started (a store that keeps none, a command's, looks nothing up per batch). The
    /// changes wait in the backlog for a batch's worth or a search.
    func publish(seq: Int, changes: () -> [Change]) {
        state.withLock { state in
            guard state.isStarted else { return }
            let flush = state.backlog.add(seq: seq, changes: changes(), searchWaits: state.progress.isWaited)
            if let flush { askFlush(upTo: flush) }
        }
    }

    /// Queues a flush of the backlog up to `seq` on the indexer's thread (called with the lock held,
    /// so that flushes are queued in the order they are asked for).
    private func askFlush(upTo seq: Int) {
        flushes.add(1, ordering: .relaxed)
        worker.async { [self] in indexBacklog(upTo: seq) }
    }

    /// Indexes the changes in the backlog up to `seq`, one published state at a time (the index's
    /// lock is held for one state's changes, not for the whole backlog), waking the searches each
    /// covers.
    private func indexBacklog(upTo seq: Int) {
        let entries = state.withLock { $0.backlog.take(upTo: seq) }
        for (seq, changes) in entries {
            let isNew = indexed.withLock { indexed in
                // A change the state the index was built from already held.
                guard seq > indexed.seq ?? 0 else { return false }
                for change in changes {
                    if let old = change.old { indexed.index.remove(old) }
                    if let new = change.new { indexed.index.add(new) }
                }
                indexed.seq = seq
                return true
            }
            if isNew { covered(seq) }
        }
    }

    /// The index covers the state at `seq`: the searches waiting for it go on.
    private func covered(_ seq: Int) {
        for waiter in state.withLock({ $0.progress.advance(to: seq) }) { waiter.resume(returning: true) }
    }

    /// Runs `search` on the index once it covers `seq`; nil when it did not within `maxWait`.
    func search<Result: Sendable>(covering seq: Int, _ search: (SearchIndex) -> Result) async -> Result? {
        let ready: Bool = await withCheckedContinuation { continuation in
            let action = state.withLock { state in
                let action = state.progress.wait(for: seq, continuation)
                // The changes it needs may wait in the backlog: they are indexed now.
                if case .wait = action, let flush = state.backlog.searchWaits() { askFlush(upTo: flush) }
                return action
            }
            guard case .wait(let ticket) = action else {
                continuation.resume(returning: true)
                return
            }
            let maxWait = self.maxWait
            Task { [self] in
                try? await Task.sleep(for: maxWait)
                state.withLock { $0.progress.timeOut(ticket) }?.resume(returning: false)
            }
        }
        guard ready else { return nil }
        return indexed.withLock { search($0.index) }
    }
}
