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

    @Test("the shards are a power of two, at least one")
    func shardCount() {
        #expect([0, 1, 2, 3, 5, 63, 64, 65].map { ThreadShards<Int>(count: $0).count } == [1, 1, 2, 4, 8, 64, 64, 128])
    }

    @Test("a thread's identity is its own: the same on one thread, another on a thread alive beside it")
    func threadIdentity() {
        let here = ThreadShards<Int>.threadID
        #expect(ThreadShards<Int>.threadID == here)
        let there = Mutex<UInt?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            there.withLock { $0 = ThreadShards<Int>.threadID }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(there.withLock { $0 } != nil)
        #expect(there.withLock { $0 } != here)
    }

    @Test("threads' identities (addresses a stack apart, whose low bits are alike) spread over the shards")
    func spread() {
        let count = 64
        // Linux places each thread's control block at the top of its stack: 8 MiB and a guard page
        // apart by default.
        let ids = (0..<16).map { UInt(0x7F00_0000_0000) + UInt($0) * ((8 << 20) + 4096) + 0x6C0 }
        let indices = ids.map { ThreadShards<Int>.index(ofThread: $0, among: count) }
        #expect(indices.allSatisfy { (0..<count).contains($0) })
        #expect(Set(indices).count >= 12, "16 threads on \(Set(indices).count) shards: \(indices)")
        #expect(ThreadShards<Int>.index(ofThread: 12345, among: 1) == 0)
    }
}
