import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One event from the server's feed: a line of its log.
public struct FeedEvent: Sendable, Hashable {
    /// Its position in the log.
    public var seq: Int
    /// `created`, `edited`, `deleted` or `erased`.
    public var type: String
    /// The log line, exactly as stored (JSON: `seq`, `type`, `id`, `at`, `by`, `data`, …), for a
    /// client whose token is an auditor's or an admin's; for any other, its public form, JSON with
    /// `seq`, `type`, `id` (the announcement's) and `at` only.
    public var line: String
}

extension AnnouncementsClient {
    /// The server's events after `seq`, then each new one as it is appended, for as long as the
    /// sequence is iterated. When the connection drops it reconnects with `Last-Event-ID`, so no
    /// event is missed or repeated: after `retryDelay` (or the delay the server last sent as
    /// `retry:`, or the `Retry-After` of a busy server's 503; at least 0.1 s), doubled after each
    /// attempt that failed in a row (one that brought no event or page and was open less than
    /// `Reconnection.steady`), at most a minute (or a longer `retryDelay` or `retry:`, at
    /// most five minutes), less a random part of it so that many clients do not come back at
    /// once. `idleTimeout` is how long a connection may stay silent before it is taken for dead:
    /// longer than the server's `feed_heartbeat_seconds` (and never shorter than the client's
    /// `timeout`).
    ///
    /// With `pollInterval` (at least 0.1 s), it reads the feed a page at a time (as `eventPage`)
    /// instead of as a stream: at once while pages bring events, then one every `pollInterval`.
    /// Each page from a position above 0 sends it as `Min-Seq` (the last event it got), so that a node behind
    /// the one that answered the page before waits for it (or answers 503) instead of taking
    /// the position for one beyond its log. A failed page is asked again as a dropped stream is
    /// reconnected (a `Retry-After` honoured); `retryDelay` and the errors that end the feed are
    /// the same, but there is no `retry:`, heartbeat or `idleTimeout`, and a captive portal's page
    /// is `invalidJSON`. That is the default on Linux (one page a second), where
    /// swift-corelibs-foundation's `URLSession` busy-polls the socket of a response still
    /// streaming (an open, idle stream costs most of a CPU core); nil (elsewhere) streams.
    ///
    /// It reads only as fast as it is iterated: a consumer that falls behind holds at most a page
    /// or `FeedStream.highWater` bytes of the stream (the connection is paused above it, and the
    /// server waits), never the rest of the log. Each connection from a position above 0 sends it
    /// as `Min-Seq` too, so that a node behind the one that streamed before waits for it (on
    /// several PostgreSQL nodes a position beyond the log is then a 503, retried, not
    /// `positionBeyondLog`). Once it ended with an error, `next()` is nil; tasks that iterate it
    /// (one iterator or several) take turns, and one whose task is cancelled gets nil while the
    /// others go on.
    ///
    /// It ends when the iterating task is cancelled, or with a `ClientError` that no reconnection
    /// can mend: a refusal (401, 403, 404, 406…), `positionBeyondLog` when the server's log ends
    /// before the position asked for (restored from an older backup), a network failure that is
    /// not passing (a certificate the system does not trust, a URL it will not load), or a 200
    /// that is not an event stream (a captive portal's page).
    public func events(
        after seq: Int = 0, retryDelay: Duration = .seconds(1), idleTimeout: Duration = .seconds(45),
        pollInterval: Duration? = AnnouncementsClient.defaultPollInterval
    ) -> FeedEvents {
        FeedEvents(reader: FeedReader(client: self, after: seq, retryDelay: retryDelay, idleTimeout: idleTimeout, pollInterval: pollInterval))
    }

    /// Whether the feed may work if asked again: the network, a restarting server, a busy proxy,
    /// a stream cut off mid-way. A refusal (401, 404, 406…) or a network failure that is the
    /// client's own setting will not change. Linux reports a stream (or a page) cut off as an
    /// unknown error, and a certificate it does not trust too: an unknown error is passing only
    /// for a feed that had opened a stream or read a page before (`streamed`), whose certificate
    /// is trusted.
    static func isPassing(_ error: ClientError, afterAStream streamed: Bool) -> Bool {
        switch error {
        case .unreachable(_, let underlying) where underlying.code == .unknown: streamed
        case .unreachable(_, let underlying): !permanentFailures.contains(underlying.code)
        case .status(let code, _, _): ClientError.temporaryStatuses.contains(code)
        default: false
        }
    }

    /// The server's stored events after `seq`, oldest first: at most `limit` (the server sends
    /// at most 1000 at once), none when no event came after `seq` yet. Throws
    /// `positionBeyondLog` when the server's log ends before `seq` (it was restored from an older
    /// backup): read again after the `lastSeq` it names, or from 0. A position above 0 goes as
    /// `Min-Seq` too, as the feed's own pages send it: a node behind the one that answered the
    /// page before waits for it (a 503 after 5 s, sent again as any read is), rather than answer
    /// as a log that ends before it. So on several PostgreSQL nodes a position beyond the table
    /// (restored from an older backup) is the 503 `status` once those retries are spent, not
    /// `positionBeyondLog`: a node cannot tell it from one behind.
    public func eventPage(after seq: Int = 0, limit: Int = 100) async throws(ClientError) -> [FeedEvent] {
        let received = try await fetch(path: "events", query: Self.pageQuery(after: seq, limit: limit), version: nil, cached: false, minSeq: seq > 0 ? seq : nil, accepting: [])
        guard (200..<300).contains(received.status) else { throw ClientError(status: received.status, body: received.data) }
        return try FeedPage.events(in: received)
    }

    /// The query of a page of the feed.
    static func pageQuery(after seq: Int, limit: Int) -> [URLQueryItem] {
        [URLQueryItem(name: "after", value: String(seq)), URLQueryItem(name: "limit", value: String(limit))]
    }

    /// How `events` reads the feed by default: in pages, one a second while caught up, on Linux
    /// (see `events`); as a stream elsewhere.
    #if canImport(FoundationNetworking)
    public static let defaultPollInterval: Duration? = .seconds(1)
    #else
    public static let defaultPollInterval: Duration? = nil
    #endif

    /// The most events a page of the feed read in pages asks for: the server's largest page.
    static let pollPageSize = 1000
}
