#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Values that many threads add, kept by the thread that adds them and handed on in bursts: what
/// every request records (its count and duration) without a lock, a counter or a histogram that
/// every core writes to for every request. Each thread adds to a shard of its own (chosen by its
/// identity; two threads may share one, which is correct, only slower), under a lock no other
/// thread takes but to empty it; every `burst` values, the adder gets the shard's values to hand
/// on itself, so that the shared metrics are written in runs from one core, not line by line from
/// all of them. `takeAll` empties every shard (before a scrape, which then counts every value
/// added before it).
final class ThreadShards<Value: Sendable>: Sendable {
    /// One thread's values, padded so that two shards' locks never share a cache line.
    private final class Shard: Sendable {
        let values = Mutex<[Value]>([])
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    private let shards: [Shard]
    /// The values a shard keeps before it hands them on.
    let burst: Int

    /// `count` shards (rounded up to a power of two), each handing on every `burst` values.
    init(count: Int = 64, burst: Int = 64) {
        let count = 1 << (Int.bitWidth - max(count - 1, 1).leadingZeroBitCount)
        shards = (0..<count).map { _ in Shard() }
        self.burst = max(burst, 1)
    }

    /// Adds `value` to the calling thread's shard; returns the shard's values, `value` last, when
    /// they reach `burst` (the caller hands them on), nil otherwise.
    func add(_ value: Value) -> [Value]? {
        shards[Self.index(ofThread: Self.threadID, among: shards.count)].values.withLock { values in
            values.append(value)
            guard values.count >= burst else { return nil }
            defer { values = [] }
            return values
        }
    }

    /// Every shard's values, each shard emptied.
    func takeAll() -> [Value] {
        shards.flatMap { shard in
            shard.values.withLock { values in
                defer { values = [] }
                return values
            }
        }
    }

    /// The calling thread's identity.
    private static var threadID: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// The shard of thread `id` among `count` (a power of two): a multiplicative hash of its
    /// identity (an address, whose low bits are alike from thread to thread).
    static func index(ofThread id: UInt, among count: Int) -> Int {
        guard count > 1 else { return 0 }
        let bits = Int.bitWidth - (count - 1).leadingZeroBitCount
        return Int(truncatingIfNeeded: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}
