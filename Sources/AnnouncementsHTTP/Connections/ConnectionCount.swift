import Logging
import Synchronization

/// The connections open now, against the most allowed, and the refused ones still closing.
final class ConnectionCount: Sendable {
    /// A connection past the limit (it was answered 503).
    struct Refused: Error {}

    let maximum: Int
    private let count = Atomic(0)
    private let refusals = Atomic(0)
    private let report = Mutex(RefusalReport(interval: .seconds(10)))
    /// Refused connections kept open for a moment so that their 503 arrives; past this many they
    /// are closed at once, so that a flood of them cannot take every descriptor.
    static let refusalsKept = 64

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// The connections open now.
    var openNow: Int { count.load(ordering: .relaxed) }

    /// Counts a new connection in, if there is room.
    func open() -> Bool {
        var current = count.load(ordering: .relaxed)
        while current < maximum {
            let (exchanged, original) = count.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts a connection out.
    func close() {
        count.subtract(1, ordering: .relaxed)
    }

    /// Counts a refused connection that stays open for a moment, if there is room for it.
    func refusing() -> Bool {
        if refusals.add(1, ordering: .relaxed).newValue <= Self.refusalsKept { return true }
        refusals.subtract(1, ordering: .relaxed)
        return false
    }

    /// A refused connection closed.
    func refused() {
        refusals.subtract(1, ordering: .relaxed)
    }

    /// Counts a connection refused for the limit; returns how many to log now (see `RefusalReport`).
    func reportRefusal(at now: ContinuousClock.Instant = .now) -> Int? {
        report.withLock { $0.refused(at: now) }
    }
}

/// When connections refused past `max_connections` are logged: the first at once, then at most
/// one line per `interval`, with how many were refused since the line before (a flood of them
/// is one line every few seconds, not one each).
struct RefusalReport {
    let interval: Duration
    private var lastLine: ContinuousClock.Instant?
    private var unlogged = 0

    init(interval: Duration) {
        self.interval = interval
    }

    /// The warning for `count` connections refused past `limit`, the latest from `address`: one
    /// line for many names that address as the latest refused one's, not as the one it was about.
    static func warning(count: Int, limit: Int, address: String) -> (message: Logger.Message, metadata: Logger.Metadata) {
        let connections = count == 1 ? "a connection" : "\(count) connections"
        return (
            "refused \(connections) past http.max_connections (\(limit)) since the last such line: raise the limit (and the descriptor limit), or find who holds so many open",
            ["http.max_connections": "\(limit)", count == 1 ? "client.address" : "client.latest_address": "\(address)"]
        )
    }

    /// A connection was refused at `now`: the count to log now, or nil to wait.
    mutating func refused(at now: ContinuousClock.Instant) -> Int? {
        unlogged += 1
        if let lastLine, now - lastLine < interval { return nil }
        lastLine = now
        defer { unlogged = 0 }
        return unlogged
    }
}
