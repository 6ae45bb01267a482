import Dispatch
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// The ids the server gives requests that bring none (`RequestID`).
@Suite struct RequestIDTests {
    @Test("ids made on many threads at once are all different, with the process's prefix, and short enough to allocate nothing")
    func uniqueAcrossThreads() {
        let made = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let ids = (0..<2_000).map { _ in RequestID.next() }
            made.withLock { $0 += ids }
        }
        let ids = made.withLock { $0 }
        #expect(Set(ids).count == ids.count, "every id once")
        let prefix = "\(ids[0].prefix(6))-"
        #expect(ids.allSatisfy { $0.hasPrefix(prefix) && $0.wholeMatch(of: /[0-9a-f]{6}-[0-9a-f]+/) != nil })
        #expect(ids.allSatisfy { $0.utf8.count <= 15 })
    }
}
