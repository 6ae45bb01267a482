import AnnouncementsDomain
import Dispatch
import Synchronization

extension ReadModel {
    /// Builds the title index after a replay that deferred it: one sort instead of n inserts, with
    /// each half of the announcements keyed and sorted on its own thread, then merged.
    public mutating func buildTitleIndex() {
        guard !hasTitleIndex else { return }
        let model = self
        let sorted = Mutex<[[TitleProbe]]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let probes = model.sortedTitleProbes(half: half)
            sorted.withLock { $0[half] = probes }
        }
        let (left, right) = sorted.withLock { ($0[0], $0[1]) }
        setTitleIndex(merging: left, right)
    }
}
