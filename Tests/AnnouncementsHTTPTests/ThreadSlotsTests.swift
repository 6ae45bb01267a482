import Dispatch
import Foundation
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// A state per thread (`ThreadSlots`): found again by the thread that wrote it, visited by `forEach`.
@Suite struct ThreadSlotsTests {
    @Test("what a thread writes to its slot it finds there again; each slot starts as made for its index; forEach visits every slot once")
    func callersSlot() {
        let slots = ThreadSlots<[Int]>(count: 4) { [$0] }
        slots.withCallersSlot { $0.append(10) }
        slots.withCallersSlot { $0.append(20) }
        let mine = slots.withCallersSlot { $0 }
        #expect(mine.dropFirst() == [10, 20])
        var visited: [[Int]] = []
        slots.forEach { visited.append($0) }
        #expect(visited.map(\.first) == [0, 1, 2, 3], "each slot made for its index, visited in order")
        #expect(visited.filter { $0.count > 1 } == [mine])
    }

    @Test("the slots are a power of two, at least one")
    func slotCount() {
        #expect([0, 1, 2, 3, 5, 63, 64, 65].map { ThreadSlots<Int>(count: $0) { $0 }.count } == [1, 1, 2, 4, 8, 64, 64, 128])
    }

    @Test("a thread's identity is its own: the same on one thread, another on a thread alive beside it")
    func threadIdentity() {
        let here = ThreadSlots<Int>.threadID
        #expect(ThreadSlots<Int>.threadID == here)
        let there = Mutex<UInt?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            there.withLock { $0 = ThreadSlots<Int>.threadID }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(there.withLock { $0 } != nil)
        #expect(there.withLock { $0 } != here)
    }

    @Test("threads' identities (addresses a stack apart, whose low bits are alike) spread over the slots")
    func spread() {
        let count = 64
        // Linux places each thread's control block at the top of its stack: 8 MiB and a guard page
        // apart by default.
        let ids = (0..<16).map { UInt(0x7F00_0000_0000) + UInt($0) * ((8 << 20) + 4096) + 0x6C0 }
        let indices = ids.map { ThreadSlots<Int>.index(ofThread: $0, among: count) }
        #expect(indices.allSatisfy { (0..<count).contains($0) })
        #expect(Set(indices).count >= 12, "16 threads on \(Set(indices).count) shards: \(indices)")
        #expect(ThreadSlots<Int>.index(ofThread: 12345, among: 1) == 0)
    }
}
