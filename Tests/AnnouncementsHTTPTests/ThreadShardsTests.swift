import Dispatch
import Foundation
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// What each request records by the thread that answered it (`ThreadShards`): nothing lost,
/// nothing counted twice, handed on in bursts.
@Suite struct ThreadShardsTests {
    @Test("values added from many threads at once are each handed on once: in full bursts by the thread that filled its shard, the rest by takeAll")
    func everyValueOnce() {
        let shards = ThreadShards<Int>(count: 8, burst: 16)
        let bursts = Mutex<[[Int]]>([])
        let threads = 8, each = 1_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for value in (thread * each)..<((thread + 1) * each) {
                shards.add(value) { burst in bursts.withLock { $0.append(burst) } }
            }
        }
        let handedOn = bursts.withLock { $0 }
        #expect(!handedOn.isEmpty)
        #expect(handedOn.allSatisfy { $0.count == 16 }, "a burst is a full shard: \(handedOn.map(\.count).filter { $0 != 16 })")
        let rest = shards.takeAll()
        #expect(Set(rest).count == rest.count)
        let all = handedOn.flatMap { $0 } + rest
        #expect(all.count == threads * each, "each value once")
        #expect(Set(all) == Set(0..<(threads * each)))
        #expect(shards.takeAll().isEmpty, "taken: nothing is left")
    }

    @Test("one thread's values stay in its shard until a burst fills it; takeAll hands them on at once")
    func burstsOnOneThread() {
        let shards = ThreadShards<Int>(count: 4, burst: 3)
        var handedOn: [[Int]] = []
        for value in 1...4 { shards.add(value) { handedOn.append($0) } }
        #expect(handedOn == [[1, 2, 3]])
        #expect(shards.takeAll() == [4])
        for value in 5...6 { shards.add(value) { handedOn.append($0) } }
        #expect(handedOn == [[1, 2, 3]], "emptied by takeAll: a burst starts over")
        #expect(shards.takeAll() == [5, 6])
    }
}
