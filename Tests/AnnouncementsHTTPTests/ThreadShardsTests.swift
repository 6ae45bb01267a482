import Dispatch
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
                if let burst = shards.add(value) { bursts.withLock { $0.append(burst) } }
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
        #expect(shards.add(1) == nil)
        #expect(shards.add(2) == nil)
        #expect(shards.add(3) == [1, 2, 3])
        #expect(shards.add(4) == nil)
        #expect(shards.takeAll() == [4])
        #expect(shards.add(5) == nil, "emptied by takeAll: a burst starts over")
    }

    @Test("threads' identities (addresses a stack apart, whose low bits are alike) spread over the shards")
    func spread() {
        let count = 64
        // Linux places each thread's control block at the top of its stack: 8 MiB apart by default.
        let ids = (0..<16).map { UInt(0x7F00_0000_0000) + UInt($0) * (8 << 20) + 0x6C0 }
        let indices = ids.map { ThreadShards<Int>.index(ofThread: $0, among: count) }
        #expect(indices.allSatisfy { (0..<count).contains($0) })
        #expect(Set(indices).count >= 12, "16 threads on \(Set(indices).count) shards: \(indices)")
        #expect(ThreadShards<Int>.index(ofThread: 12345, among: 1) == 0)
    }
}
