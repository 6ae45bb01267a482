/// Why a connection to the feed ended without a stream, and how long the server asked to wait.
struct FeedRefusal: Error {
    var error: ClientError
    var retryAfter: Duration?
    /// The bytes of the answer's body when the server answered (a stream refused): a request
    /// answered, for `statistics`.
    var answeredBytes: Int?
}

/// The waits between the feed's connections: `delay` (at least `shortest`) after one that worked,
/// doubled after each that failed in a row, at most `longest` (or a longer `delay`, at most
/// `EventStreamParser.longestRetry`), with a random part taken off (at most half); never less
/// than a server's `Retry-After`, with a random part added (see `spread`). A connection
/// worked when it brought events (or a page), or stayed open `steady` (an idle stream a proxy
/// cut): one that opened and ended at once, as a server in trouble does, counts as failed.
struct Reconnection {
    var delay: Duration
    private var failures = 0
    /// Whether a connection of this feed ever opened a stream or brought a page: the address and
    /// the server's certificate work, so a failure Linux reports as unknown is a cut, not those.
    private(set) var hasOpened = false
    /// When it did.
    private var openedAt: ContinuousClock.Instant?
    static let longest: Duration = .seconds(60)
    static let shortest: Duration = .milliseconds(100)
    static let steady: Duration = .seconds(10)

    init(delay: Duration) {
        self.delay = delay
    }

    /// The connection sent something: it opened a stream.
    mutating func received(at now: ContinuousClock.Instant = .now) {
        hasOpened = true
        if openedAt == nil { openedAt = now }
    }

    /// The connection brought events or a page: the next wait is `delay` again.
    mutating func worked() {
        failures = 0
    }

    /// The wait before the next connection, and no less than `atLeast` (a `Retry-After`).
    mutating func next(atLeast asked: Duration? = nil, now: ContinuousClock.Instant = .now) -> Duration {
        if let openedAt, now - openedAt >= Self.steady { failures = 0 }
        openedAt = nil
        let ceiling = max(min(delay, EventStreamParser.longestRetry), Self.longest)
        let base = min(max(delay, Self.shortest), ceiling)
        let doubled = base * (1 << min(failures, 16))
        failures += 1
        let capped = min(doubled, ceiling)
        let jittered = capped * Double.random(in: 0.5...1)
        return max(jittered, Self.spread(min(asked ?? .zero, EventStreamParser.longestRetry)))
    }

    /// A server's `Retry-After`, and up to a quarter more at random: the clients it answered
    /// together (after a restart, every app's stream) do not all come back at the same instant.
    static func spread(_ asked: Duration) -> Duration {
        asked * Double.random(in: 1...1.25)
    }
}
