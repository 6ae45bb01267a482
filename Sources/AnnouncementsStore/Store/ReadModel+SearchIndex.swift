import AnnouncementsDomain
import Dispatch
import Synchronization

extension ReadModel {
    /// The search index of every live announcement: each half (by id) indexed on its own thread,
    /// then merged.
    package func searchIndex() -> SearchIndex {
        let model = self
        let halves = Mutex<[SearchIndex]>([SearchIndex(), SearchIndex()])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let middle = model.count / 2
            var index = SearchIndex()
            index.deferSorting()
            for announcement in model.byId.elements(in: half == 0 ? 0..<middle : middle..<model.count) { index.add(announcement) }
            halves.withLock { $0[half] = index }
        }
        var (index, second) = halves.withLock { ($0[0], $0[1]) }
        index.merge(second)
        second = SearchIndex()
        index.finishSorting()
        return index
    }
}
