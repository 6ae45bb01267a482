import Synchronization

/// The event streams open at once, against the most allowed: half of `http.max_connections`, so
/// that clients following the log (whose heartbeats keep them from ever being idle) cannot take
/// every connection the server has, and the other half stays for everything else.
final class StreamSlots: Sendable {
    /// One open stream's place: given back when the stream ends (`release`), or when its response
    /// is dropped unsent (the last reference goes); once either way.
    final class Slot: Sendable {
        private let slots: StreamSlots
        private let released = Atomic(false)

        fileprivate init(_ slots: StreamSlots) {
            self.slots = slots
        }

        func release() {
            if !released.exchange(true, ordering: .relaxed) { slots.open.subtract(1, ordering: .relaxed) }
        }

        deinit {
            release()
        }
    }

    let maximum: Int
    private let open = Atomic(0)

    init(maxConnections: Int) {
        maximum = max(1, maxConnections / 2)
    }

    /// A place for one more stream, or nil when `maximum` are open.
    func take() -> Slot? {
        var current = open.load(ordering: .relaxed)
        while current < maximum {
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return Slot(self) }
            current = original
        }
        return nil
    }

    /// How many streams are open (the metrics' `announcements_stream_subscribers`).
    var count: Int { open.load(ordering: .relaxed) }
}
