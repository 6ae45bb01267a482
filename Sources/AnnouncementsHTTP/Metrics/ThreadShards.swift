#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// Values that many threads add, kept by the thread that adds them and handed on in bursts: what
/// every request records (its count and duration) without a lock, a counter or a histogram that
/// every core writes to for every request. Each thread adds to a shard of its own, chosen by its
/// identity (two threads may share one, which is correct, only slower), whose lock is otherwise
/// taken only to empty it; every `burst` values, the thread hands the shard's values on itself,
/// under that lock, so that the shared metrics are written in runs from one core, not line by line
/// from all of them. `takeAll` empties every shard, each once any burst it is handing on is done:
/// before a scrape, which then counts every value added before it.
final class ThreadShards<Value: Sendable>: Sendable {
    /// One thread's values, padded so that two shards' locks never share a cache line (of 64 or
    /// 128 bytes).
    private final class Shard: Sendable {
        let values = Mutex<[Value]>([])
        private let padding: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    private let shards: [Shard]
    /// The values a shard keeps before it hands them on.
    let burst: Int

    /// `count` shards (rounded up to a power of two), each handing on every `burst` values.
    init(count: Int = 64, burst: Int = 64) {
        let count = count <= 1 ? 1 : 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
        shards = (0..<count).map { _ in Shard() }
        self.burst = max(burst, 1)
    }

    /// The number of shards.
    var count: Int { shards.count }

    /// Adds `value` to the calling thread's shard; when the shard holds `burst` values (`value`
    /// last), hands them to `handOn` before it returns, holding the shard's lock (a `takeAll`
    /// meanwhile waits for them), and empties it.
    func add(_ value: Value, handOn: ([Value]) -> Void) {
        shards[Self.index(ofThread: Self.threadID, among: shards.count)].values.withLock { values in
            if values.isEmpty { values.reserveCapacity(burst) }
            values.append(value)
            guard values.count >= burst else { return }
            handOn(values)
            values.removeAll(keepingCapacity: true)
        }
    }

    /// Every shard's values, each shard emptied (its storage goes with them: the next `add` to it
    /// makes room for a burst again).
    func takeAll() -> [Value] {
        shards.flatMap { shard in
            shard.values.withLock { values in
                defer { values = [] }
                return values
            }
        }
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

    /// The shard of thread `id` among `count` (a power of two): a multiplicative hash of its
    /// identity (an address, whose low bits are alike from thread to thread).
    static func index(ofThread id: UInt, among count: Int) -> Int {
        guard count > 1 else { return 0 }
        let bits = Int.bitWidth - (count - 1).leadingZeroBitCount
        return Int(truncatingIfNeeded: (UInt64(id) &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
    }
}
