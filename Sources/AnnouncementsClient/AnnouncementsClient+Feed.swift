import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One event from the server's feed: a line of its log.
public struct FeedEvent: Sendable, Hashable {
    /// Its position in the log.
    public var seq: Int
    /// `created`, `edited` or `deleted`.
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
    /// attempt that failed in a row, at most a minute (or a longer `retryDelay` or `retry:`, at
    /// most five minutes), less a random part of it so that many clients do not come back at
    /// once. `idleTimeout` is how long a connection may stay silent before it is taken for dead:
    /// longer than the server's `feed_heartbeat_seconds` (and never shorter than the client's
    /// `timeout`).
    ///
    /// With `pollInterval` (at least 0.1 s), it reads the feed a page at a time (as `eventPage`)
    /// instead of as a stream: at once while pages bring events, then one every `pollInterval`.
    /// Each page after the first sends `Min-Seq` (the last event it got), so that a node behind
    /// the one that answered the page before waits for it (or answers 503) instead of taking
    /// the position for one beyond its log. A failed page is asked again as a dropped stream is
    /// reconnected (a `Retry-After` honoured); `retryDelay` and the errors that end the feed are
    /// the same, but there is no `retry:`, heartbeat or `idleTimeout`, and a captive portal's page
    /// is `invalidJSON`. That is the default on Linux (one page a second), where
    /// swift-corelibs-foundation's `URLSession` busy-polls the socket of a response still
    /// streaming (an open, idle stream costs most of a CPU core); nil (elsewhere) streams.
    ///
    /// It ends when the iterating task is cancelled, or with a `ClientError` that no reconnection
    /// can mend: a refusal (401, 403, 404, 406…), `positionBeyondLog` when the server's log ends
    /// before the position asked for (restored from an older backup), a network failure that is
    /// not passing (a certificate the system does not trust, a URL it will not load), or a 200
    /// that is not an event stream (a captive portal's page).
    public func events(
        after seq: Int = 0, retryDelay: Duration = .seconds(1), idleTimeout: Duration = .seconds(45),
        pollInterval: Duration? = AnnouncementsClient.defaultPollInterval
    ) -> AsyncThrowingStream<FeedEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var last = seq
                var reconnection = Reconnection(delay: retryDelay)
                while !Task.isCancelled {
                    var wait: Duration?
                    do {
                        let deliver = { (event: FeedEvent) in
                            last = event.seq
                            continuation.yield(event)
                        }
                        if let pollInterval {
                            try await poll(after: last, every: pollInterval, reconnection: &reconnection, deliver)
                        } else {
                            try await follow(after: last, idleTimeout: idleTimeout, reconnection: &reconnection, deliver)
                        }
                    } catch let refusal as FeedRefusal {
                        guard Self.isPassing(refusal.error, afterAStream: reconnection.streamed) else {
                            continuation.finish(throwing: refusal.error)
                            return
                        }
                        wait = refusal.retryAfter
                    } catch {
                        continuation.finish(throwing: error)
                        return
                    }
                    try? await Task.sleep(for: reconnection.next(atLeast: wait))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Whether the feed may work if asked again: the network, a restarting server, a busy proxy,
    /// a stream cut off mid-way. A refusal (401, 404, 406…) or a network failure that is the
    /// client's own setting will not change. Linux reports a stream cut off as an unknown error,
    /// and a certificate it does not trust too: an unknown error is passing only on a connection
    /// that had opened a stream.
    static func isPassing(_ error: ClientError, afterAStream streamed: Bool) -> Bool {
        switch error {
        case .unreachable(_, let underlying) where underlying.code == .unknown: streamed
        case .unreachable(_, let underlying): !permanent.contains(underlying.code)
        case .status(let code, _, _): code >= 500 || code == 429
        default: false
        }
    }

    /// Network failures that asking again cannot mend: the URL, the system's rules, certificates.
    private static let permanent: Set<URLError.Code> = [
        .badURL, .unsupportedURL, .userAuthenticationRequired, .appTransportSecurityRequiresSecureConnection,
        .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
        .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired,
    ]

    /// The server's stored events after `seq`, oldest first: at most `limit` (the server sends
    /// at most 1000 at once), none when no event came after `seq` yet. Throws
    /// `positionBeyondLog` when the server's log ends before `seq` (it was restored from an older
    /// backup): read again after the `lastSeq` it names, or from 0.
    public func eventPage(after seq: Int = 0, limit: Int = 100) async throws(ClientError) -> [FeedEvent] {
        try FeedPage.events(in: try await send(.get, path: "events", query: Self.pageQuery(after: seq, limit: limit)))
    }

    /// The query of a page of the feed.
    private static func pageQuery(after seq: Int, limit: Int) -> [URLQueryItem] {
        [URLQueryItem(name: "after", value: String(seq)), URLQueryItem(name: "limit", value: String(limit))]
    }

    /// How `events` reads the feed by default: in pages, one a second while caught up, on Linux
    /// (see `events`); as a stream elsewhere.
    #if canImport(FoundationNetworking)
    public static let defaultPollInterval: Duration? = .seconds(1)
    #else
    public static let defaultPollInterval: Duration? = nil
    #endif

    /// The most events a page of `poll` asks for: the server's largest page.
    static let pollPageSize = 1000

    /// The feed read a page at a time: delivers each page's events, asks again at once after a page
    /// with events and after `interval` after an empty one, until the task is cancelled. Throws a
    /// `FeedRefusal` when a page fails (the caller decides whether to ask again).
    private func poll(after seq: Int, every interval: Duration, reconnection: inout Reconnection, _ deliver: (FeedEvent) -> Void) async throws {
        var last = seq
        while !Task.isCancelled {
            let received: Received
            do throws(ClientError) {
                received = try await attempt(
                    .get, path: "events", query: Self.pageQuery(after: last, limit: Self.pollPageSize),
                    minSeq: last > 0 ? last : nil, accepting: [429, 503]
                )
            } catch {
                // A 409 naming the position (this server's log ends before it, and no other node
                // appends to it) is `positionBeyondLog`, as for a stream resumed there.
                throw FeedRefusal(error: error)
            }
            if received.status == 429 || received.status == 503 {
                let retryAfter = Self.retryAfter(received.header("Retry-After"), atMost: EventStreamParser.longestRetry)
                throw FeedRefusal(error: ClientError(status: received.status, body: received.data), retryAfter: retryAfter)
            }
            let page: [FeedEvent]
            do throws(ClientError) {
                page = try FeedPage.events(in: received)
            } catch {
                throw FeedRefusal(error: error)
            }
            reconnection.opened()
            for event in page where event.seq > last {
                deliver(event)
                last = event.seq
            }
            if page.isEmpty { try? await Task.sleep(for: max(interval, Reconnection.shortest)) }
        }
    }

    /// One connection to the stream: delivers its events until it ends; a `retry:` from the server
    /// sets the reconnection delay, and an opened stream starts its doubling again. Throws a
    /// `FeedRefusal`, or `badEventStream`.
    private func follow(after seq: Int, idleTimeout: Duration, reconnection: inout Reconnection, _ deliver: (FeedEvent) -> Void) async throws {
        var request = URLRequest(url: configuration.baseURL.appendingPathComponent("events"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue(configuration.version.rawValue, forHTTPHeaderField: "Accept-Version")
        request.setValue(String(seq), forHTTPHeaderField: "Last-Event-ID")
        // An auditor's (or an admin's) token gets the full lines; without one, the public form.
        if let token = configuration.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        // Longer than the server's heartbeat (15 seconds by default), so an idle stream is not taken for a dead one.
        let idle = idleTimeout.components
        request.timeoutInterval = max(configuration.timeout, Double(idle.seconds) + Double(idle.attoseconds) / 1e18)
        let chunks = StreamDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: chunks, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: request).resume()
        var parser = EventStreamParser()
        for try await chunk in chunks.stream {
            reconnection.opened()
            for event in try parser.feed(chunk) { deliver(event) }
            if let asked = parser.retry { reconnection.delay = min(asked, EventStreamParser.longestRetry) }
        }
    }
}

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

/// Turns a URLSession data task's callbacks into an async sequence of received chunks; a response
/// other than 200 ends it with the `ClientError` its body stands for.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let stream: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    /// The status, `Retry-After` and body so far of a response that did not open a stream.
    private let refusal = Mutex<(status: Int, retryAfter: Duration?, body: Data)?>(nil)
    /// More of a refusal's body than this is not read: an API error is a few hundred bytes.
    private static let refusalLimit = 64 << 10

    override init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            // Read its body (the API's error says why) before finishing.
            let retryAfter = AnnouncementsClient.retryAfter(http.value(forHTTPHeaderField: "Retry-After"), atMost: EventStreamParser.longestRetry)
            refusal.withLock { $0 = (http.statusCode, retryAfter, Data()) }
        } else if let http = response as? HTTPURLResponse,
                  http.value(forHTTPHeaderField: "Content-Type")?.lowercased().hasPrefix("text/event-stream") != true {
            let type = http.value(forHTTPHeaderField: "Content-Type") ?? "none"
            continuation.finish(throwing: ClientError.badEventStream(
                detail: "GET /events answered 200 with Content-Type \(type), not text/event-stream: check that the URL is this API's (a login page of the network?)"
            ))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let isRefusal = refusal.withLock { refusal -> Bool in
            guard let room = refusal.map({ Self.refusalLimit - $0.body.count }) else { return false }
            refusal?.body.append(data.prefix(max(0, room)))
            return true
        }
        if !isRefusal { continuation.yield(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let refused = refusal.withLock({ $0 }) {
            let fallback = "GET /events did not open an event stream; check that the URL is this API's"
            let error = ClientError(status: refused.status, body: refused.body, fallback: fallback)
            continuation.finish(throwing: FeedRefusal(error: error, retryAfter: refused.retryAfter))
        } else if let error = error as? URLError, let url = task.originalRequest?.url {
            continuation.finish(throwing: FeedRefusal(error: .unreachable(url: url, underlying: error)))
        } else {
            continuation.finish()
        }
    }
}

/// Reads `text/event-stream` as its specification says (WHATWG HTML, "Server-sent events"): lines
/// end with CR, LF or CRLF (also split between two chunks); a blank line ends an event; `id:`,
/// `event:`, `data:` (several are joined with LF) and `retry:` fields, a single space after the
/// colon dropped, a line without a colon a field with an empty value, other fields ignored;
/// comment lines (`:`) are heartbeats. An event is delivered when it has data and an `id:` (its
/// seq). An event that grows past `maxEventBytes` without ending is an error, not memory.
struct EventStreamParser {
    /// The most bytes one event may take before the blank line that ends it: far above any line of
    /// this API's log (a body is at most a few MB of JSON).
    static let defaultMaxEventBytes = 64 << 20
    /// The longest reconnection delay taken from a server's `retry:`.
    static let longestRetry: Duration = .seconds(300)

    let maxEventBytes: Int
    /// The reconnection delay the server asked for last (`retry:`), if any.
    private(set) var retry: Duration?
    /// The line being read, and whether the last line ended with a CR (an LF next belongs to it).
    private var line: [UInt8] = []
    private var endedWithCR = false
    /// The event being read.
    private var id: Int?
    private var type = ""
    private var data: [UInt8]?
    private var eventBytes = 0

    init(maxEventBytes: Int = EventStreamParser.defaultMaxEventBytes) {
        self.maxEventBytes = maxEventBytes
    }

    /// The events `chunk` completes.
    mutating func feed(_ chunk: Data) throws(ClientError) -> [FeedEvent] {
        // An empty chunk changes nothing (it must not forget a CR that ended the last one).
        guard !chunk.isEmpty else { return [] }
        var events: [FeedEvent] = []
        let tooLarge = chunk.withUnsafeBytes { bytes in
            var index = 0
            if endedWithCR, bytes.first == Self.lf { index = 1 }
            endedWithCR = false
            while index < bytes.count {
                var end = index
                while end < bytes.count, bytes[end] != Self.lf, bytes[end] != Self.cr { end += 1 }
                line.append(contentsOf: bytes[index..<end])
                if eventBytes + line.count > maxEventBytes { return true }
                guard end < bytes.count else { break }
                if bytes[end] == Self.cr {
                    if end + 1 < bytes.count {
                        if bytes[end + 1] == Self.lf { end += 1 }
                    } else {
                        endedWithCR = true
                    }
                }
                if let event = takeLine() { events.append(event) }
                index = end + 1
            }
            return false
        }
        if tooLarge {
            throw .badEventStream(detail: "an event grew past \(maxEventBytes) bytes without the blank line that ends it")
        }
        return events
    }

    private static let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), colon = UInt8(ascii: ":"), space = UInt8(ascii: " ")

    /// Takes in the line just read; returns the event a blank line completes.
    private mutating func takeLine() -> FeedEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        guard !line.isEmpty else { return dispatch() }
        guard line[0] != Self.colon else { return nil }
        let colon = line.firstIndex(of: Self.colon) ?? line.endIndex
        let name = line[..<colon]
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == Self.space { value = value.dropFirst() }
        eventBytes += line.count
        switch String(decoding: name, as: UTF8.self) {
        case "data":
            if data == nil { data = [] } else { data?.append(Self.lf) }
            data?.append(contentsOf: value)
        case "event": type = String(decoding: value, as: UTF8.self)
        case "id": id = Int(String(decoding: value, as: UTF8.self))
        case "retry":
            if !value.isEmpty, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                retry = .milliseconds(milliseconds)
            }
        default: break
        }
        return nil
    }

    /// Ends the event being read: delivered when it has data and an id.
    private mutating func dispatch() -> FeedEvent? {
        defer { (id, type, data, eventBytes) = (nil, "", nil, 0) }
        guard let id, let data else { return nil }
        return FeedEvent(seq: id, type: type.isEmpty ? "message" : type, line: String(decoding: data, as: UTF8.self))
    }
}
