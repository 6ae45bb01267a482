/// Values that many threads add, kept by the thread that adds them and handed on in bursts: what
/// every request records (its count and duration) without a lock, a counter or a histogram that
/// every core writes to for every request. Each thread adds to a shard of its own (a slot of
/// `ThreadSlots`), whose lock is otherwise taken only to empty it; every `burst` values, the
/// thread hands the shard's values on itself, under that lock, so that the shared metrics are
/// written in runs from one core, not line by line from all of them. `takeAll` empties every
/// shard, each once any burst it is handing on is done: before a scrape, which then counts every
/// value added before it.
final class ThreadShards<Value: Sendable>: Sendable {
    private let shards: ThreadSlots<[Value]>
    /// The values a shard keeps before it hands them on.
    let burst: Int

    /// `count` shards (rounded up to a power of two), each handing on every `burst` values.
    init(count: Int = 64, burst: Int = 64) {
        shards = ThreadSlots(count: count) { _ in [] }
        self.burst = max(burst, 1)
    }

    /// The number of shards.
    var count: Int { shards.count }

    /// Adds `value` to the calling thread's shard; when the shard holds `burst` values (`value`
    /// last), hands them to `handOn` before it returns, holding the shard's lock (a `takeAll`
    /// meanwhile waits for them), and empties it.
    func add(_ value: Value, handOn: ([Value]) -> Void) {
        shards.withCallersSlot { values in
            if values.isEmpty { values.reserveCapacity(burst) }
            values.append(value)
            guard values.count >= burst else { return }
            handOn(values)
            values.removeAll(keepingCapacity: true)
        }
    }

    /// Every shard's values, each shard emptied (its storage freed: the next `add` to it makes
    /// room for a burst again).
    func takeAll() -> [Value] {
        var all: [Value] = []
        shards.forEach { values in
            all += values
            values = []
        }
        return all
    }
}
