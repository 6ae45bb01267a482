/// Why a connection to the feed ended without a stream, and how long the server asked to wait.
struct FeedRefusal: Error {
    var error: ClientError
    var retryAfter: Duration?
}

/// The waits between the feed's connections: `delay` (at least `shortest`) after one that opened
/// a stream, doubled after each that failed in a row, at most `longest` (or a longer `delay`, at
/// most `EventStreamParser.longestRetry`), with a random part taken off (at most half).
struct Reconnection {
    var delay: Duration
    private var failures = 0
    /// Whether the connection since the last wait opened a stream.
    private(set) var streamed = false
    static let longest: Duration = .seconds(60)
    static let shortest: Duration = .milliseconds(100)

    init(delay: Duration) {
        self.delay = delay
    }

    /// The connection opened a stream: the next wait is `delay` again.
    mutating func opened() {
        failures = 0
        streamed = true
    }

    /// The wait before the next connection, and no less than `atLeast` (a `Retry-After`).
    mutating func next(atLeast asked: Duration? = nil) -> Duration {
        streamed = false
        let ceiling = max(min(delay, EventStreamParser.longestRetry), Self.longest)
        let base = min(max(delay, Self.shortest), ceiling)
        let doubled = base * (1 << min(failures, 16))
        failures += 1
        let capped = min(doubled, ceiling)
        let jittered = capped * Double.random(in: 0.5...1)
        return max(jittered, min(asked ?? .zero, EventStreamParser.longestRetry))
    }
}
