#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A state for each thread: slots, each its own lock, padded so that two slots never share a
/// cache line, chosen by the calling thread's identity. What a thread keeps in its slot is written
/// by its own core alone, where one shared value would be written by every core, on every request,
/// moving its cache line from core to core and making them wait on one lock. Two threads may share
/// a slot (a correct state, only reached slower); a slot's lock is otherwise taken only by whoever
/// visits every slot (`forEach`).
final class ThreadSlots<State>: Sendable {
    /// One thread's state, padded off the next (lines of 64 or 128 bytes).
    private final class Slot: Sendable {
        let state: Mutex<State>
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

        init(_ state: consuming sending State) {
            self.state = Mutex(state)
        }
    }

    private let slots: [Slot]

    /// `count` slots (rounded up to a power of two), each starting as `initial` makes it for its
    /// index.
    init(count: Int = 64, _ initial: (_ slot: Int) -> State) {
        let count = count <= 1 ? 1 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
        slots = (0..<count).map { Slot(initial($0)) }
    }

    /// The number of slots.
    var count: Int { slots.count }

    /// Runs `body` on the calling thread's slot, holding its lock.
    func withCallersSlot<Result>(_ body: (inout sending State) -> sending Result) -> sending Result {
        slots[Self.index(ofThread: Self.threadID, among: slots.count)].state.withLock(body)
    }

    /// Runs `body` on each slot in turn, holding its lock.
    func forEach(_ body: (inout sending State) -> Void) {
        for slot in slots { slot.state.withLock { body(&$0) } }
    }

    /// The calling thread's identity (an address on every platform but Linux with glibc, where
    /// `pthread_t` is an integer holding one).
    static var threadID: UInt {
        #if os(Linux) && canImport(Glibc)
        UInt(pthread_self())
        #else
        UInt(bitPattern: pthread_self())
        #endif
    }

    /// The slot of thread `id` among `count` (a power of two): a multiplicative hash of its
    /// identity (an address, whose low bits are alike from thread to thread).
    static func index(ofThread id: UInt, among count: Int) -> Int {
        guard count > 1 else { return 0 }
        let bits = Int.bitWidth - (count - 1).leadingZeroBitCount
        return Int(truncatingIfNeeded: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}
