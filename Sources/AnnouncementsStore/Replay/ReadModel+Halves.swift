import AnnouncementsDomain
import Dispatch
import Synchronization

extension ReadModel {
    /// `work` done for each half of the announcements (half 0 and half 1, by id), each on a thread
    /// of its own, side by side: what the indexes built after a start (titles, search) split in two.
    static func inHalves<Result: Sendable>(_ work: @Sendable (_ half: Int) -> Result) -> (Result, Result) {
        let results = Mutex<[Int: Result]>([:])
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let result = work(half)
            results.withLock { $0[half] = result }
        }
        // Both ran (concurrentPerform returns after every iteration); a half that had not is done here.
        return results.withLock { results in (results[0] ?? work(0), results[1] ?? work(1)) }
    }
}
