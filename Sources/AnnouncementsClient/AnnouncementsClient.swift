import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A client for the announcements HTTP API, for iOS, macOS and Linux apps. Foundation only.
///
/// ```swift
/// let client = AnnouncementsClient(baseURL: URL(string: "https://intranet.example.com")!)
/// let page = try await client.summaries()              // the list screen (API v2)
/// let tapped = try await client.announcement(id: page.items[0].id)  // the detail screen
/// ```
///
/// Reads are conditional: the client remembers each response's ETag and sends `If-None-Match`;
/// when the server answers 304 the remembered value is returned, and no body crosses the network.
/// Requests send `Accept-Encoding: gzip`: the server compresses bodies of 1 KB or more, and
/// `URLSession` hands them over decoded. After a write, reads of announcements send `Min-Seq`:
/// through any node of several, they reflect the client's own writes.
/// Every method throws a `ClientError` (cancelling the calling task surfaces as `unreachable`
/// with `URLError.cancelled`).
public final class AnnouncementsClient: Sendable {
    /// The API versions the server speaks, sent as `Accept-Version`.
    public enum APIVersion: String, Sendable, CaseIterable {
        case v1 = "1.0"
        case v2 = "2.0"
        /// v1 and v2 with `details`: when each was created and changed, its revision, an excerpt.
        case v3 = "3.0"
    }

    public struct Configuration: Sendable {
        /// The server, e.g. `http://127.0.0.1:8080` (a path prefix such as `/api` is kept).
        public var baseURL: URL
        /// Sent as `Accept-Version` on every request but those that name their version by what
        /// they return (`announcements`: 1.0, `summaries`: 2.0, `entries` and `search`: 3.0).
        public var version: APIVersion
        /// The bearer token, sent with every request: writes need one of a role that writes, the
        /// event feed's full lines an auditor's or an admin's, and reads one of any role on a server whose
        /// reads need a token. The event feed sends full lines to an auditor or an admin, and the
        /// public form (`seq`, `type`, `id`, `at`) to anyone else. An empty one is none (an app's
        /// empty settings field): `Bearer` without a token would be a malformed request (400).
        public var token: String?
        /// How long a request may wait for the server, in seconds (a write `writeWait` more). On
        /// Linux, rounded up to whole seconds (`sessionInterval`).
        public var timeout: TimeInterval
        /// How much longer than `timeout` a write may wait for its answer: on several nodes a
        /// write waits up to 10 s for the writer role before it is answered (a 503 then). Given up
        /// on sooner, it would be sent again while the first attempt still waits, and the app told
        /// it failed when it may land. (Set by tests.)
        var writeWait: TimeInterval = 11
        /// How many times a request is sent again after the network failed under it (a dropped
        /// connection, a timeout) or the answer was a 502, 503 or 504: after the `Retry-After` it
        /// names (at most 10 seconds), else after 0.5 s, 1 s, 2 s… (at most 8 s, less up to half
        /// at random). Each write carries one `Idempotency-Key` through all its attempts, so the
        /// server applies it once however many arrive. `health()` is never sent again.
        public var writeRetries: Int

        public init(baseURL: URL, version: APIVersion = .v2, token: String? = nil, timeout: TimeInterval = 5, writeRetries: Int = 2) {
            self.baseURL = baseURL
            self.version = version
            self.token = token
            self.timeout = timeout
            self.writeRetries = writeRetries
        }
    }

    /// What the client has sent and received so far: for an app that watches its data use.
    public struct Statistics: Sendable, Hashable {
        /// Requests sent.
        public var requests = 0
        /// Reads the server answered with 304: served from the client's memory.
        public var notModified = 0
        /// Response body bytes received, as decoded: a body that came gzipped counts at its
        /// decompressed size (on the network it took a fraction of that).
        public var bytesReceived = 0
    }

    /// The configuration the client was made with (its `token` the first one: see `token`).
    public let configuration: Configuration
    /// The token, and how many times it was set since the client was made.
    private let currentToken: Mutex<(value: String?, changes: Int)>
    /// What to call when the token is set (the open feed streams' closes), by number.
    private let tokenWatchers = Mutex<(next: Int, watchers: [Int: @Sendable () -> Void])>((0, [:]))
    let session: URLSession
    let cache = ResponseCache()
    /// The highest `Log-Seq` this client's writes were answered with (0 before any): reads of
    /// announcements send it as `Min-Seq`, so that they reflect those writes whichever node of
    /// several answers them.
    let writtenUpTo = Mutex(0)

    /// A timeout as `URLSession` is given it: on Linux (swift-corelibs-foundation, whose timer
    /// takes whole seconds: 0.5 became a timer of 0, and every request timed out) rounded up to
    /// whole seconds; elsewhere as it is.
    static func sessionInterval(_ seconds: TimeInterval) -> TimeInterval {
        #if canImport(FoundationNetworking)
        seconds.rounded(.up)
        #else
        seconds
        #endif
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.currentToken = Mutex((configuration.token, 0))
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = Self.sessionInterval(configuration.timeout)
        // The client does its own conditional requests: a URL cache would answer 304s itself.
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // No redirect is followed (it would take the token and the body elsewhere): see `RedirectRefusal`.
        session = URLSession(configuration: sessionConfiguration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit {
        // A session keeps its delegate, its connections and (on Linux) libcurl's handles until it
        // is invalidated: without this, each client an app made and let go stayed behind.
        session.finishTasksAndInvalidate()
    }

    public convenience init(baseURL: URL, version: APIVersion = .v2, token: String? = nil, timeout: TimeInterval = 5, writeRetries: Int = 2) {
        self.init(configuration: Configuration(baseURL: baseURL, version: version, token: token, timeout: timeout, writeRetries: writeRetries))
    }

    /// The bearer token sent with each request from now on (`configuration.token` at first): set
    /// it when a token is refreshed, or a user signs out (nil) or in. The client keeps what it knows
    /// of its writes (reads go on reflecting them, see `Min-Seq`) and forgets the responses it kept
    /// (another caller may be allowed to read other things). A request under way keeps the token
    /// it was sent with. An event feed delivers nothing more that it received under the old one
    /// (an auditor's full lines, for a user who signed out): it connects again with the new
    /// token, from the last event it delivered.
    public var token: String? {
        get { currentToken.withLock { $0.value } }
        set {
            currentToken.withLock { $0 = (newValue, $0.changes + 1) }
            cache.forgetAll()
            // Each open feed stream closes now, not at its next chunk: its connection was opened
            // with the old token (an auditor's, receiving full lines).
            for watcher in tokenWatchers.withLock({ Array($0.watchers.values) }) { watcher() }
        }
    }

    /// The token, and how many times it was set: what a feed received under one count is not
    /// delivered under another.
    var tokenAndChanges: (value: String?, changes: Int) { currentToken.withLock { $0 } }

    /// Calls `changed` each time the token is set, until `unwatchToken` with the number returned.
    func watchToken(_ changed: @escaping @Sendable () -> Void) -> Int {
        tokenWatchers.withLock { state in
            state.next += 1
            state.watchers[state.next] = changed
            return state.next
        }
    }

    func unwatchToken(_ id: Int) {
        _ = tokenWatchers.withLock { $0.watchers.removeValue(forKey: id) }
    }

    public var statistics: Statistics { cache.statistics }

    // MARK: - Reads

    /// A page of summaries (API v2): the list screen.
    public func summaries(
        offset: Int = 0, max: Int = 10, sort: SortField = .id, order: SortOrder = .asc
    ) async throws(ClientError) -> Page<AnnouncementSummary> {
        try await list(version: .v2, offset: offset, max: max, sort: sort, order: order)
    }

    /// A page of full announcements (API v1).
    public func announcements(
        offset: Int = 0, max: Int = 10, sort: SortField = .id, order: SortOrder = .asc
    ) async throws(ClientError) -> Page<Announcement> {
        try await list(version: .v1, offset: offset, max: max, sort: sort, order: order)
    }

    /// A page of summaries with their details (API v3): a list screen that shows when each was
    /// posted or changed, and the start of its text.
    public func entries(
        offset: Int = 0, max: Int = 10, sort: SortField = .id, order: SortOrder = .asc
    ) async throws(ClientError) -> Page<AnnouncementSummary> {
        try await list(version: .v3, offset: offset, max: max, sort: sort, order: order)
    }

    /// A page of the announcements holding every word of `text` (in the title or the body's text,
    /// case and accents aside, the last word as a prefix: search as you type), those with every
    /// word in the title first, each group newest first; with their details (API v3).
    public func search(_ text: String, offset: Int = 0, max: Int = 10) async throws(ClientError) -> Page<AnnouncementSummary> {
        let query = [
            URLQueryItem(name: "q", value: text),
            URLQueryItem(name: "offset", value: String(offset)), URLQueryItem(name: "max", value: String(max)),
        ]
        return try await page(query: query, version: .v3, offset: offset)
    }

    /// One announcement, with its body: the detail screen.
    public func announcement(id: Int) async throws(ClientError) -> Announcement {
        let response = try await send(.get, path: "announcements/\(id)", cached: true)
        return try response.announcement()
    }

    /// Whether the server is up and can take writes, and how far its log goes. A server that is
    /// up but cannot write (it answers 503) returns a `degraded` health, not an error. Asked once,
    /// never again after a failure: a probe says how the server is now.
    public func health() async throws(ClientError) -> Health {
        let response = try await attempt(.get, path: "health", token: token, accepting: [503])
        do throws(ClientError) {
            return try response.decode(Health.self)
        } catch where response.status == 503 {
            // Not a health report: a proxy's, or a server's that is not this API.
            throw ClientError(status: 503, body: response.data)
        }
    }

    // MARK: - Writes (they need a `token`)

    // Each write takes an `idempotencyKey`: leave it out, and the client makes one for the write
    // and sends it with each of its own retries. Give one (a UUID the app keeps with the write
    // until it is answered) to send the write again later, after those ran out (offline, the app
    // restarted), without making it twice: the server answers a key it has seen with the first
    // outcome.

    /// Posts a new announcement.
    public func create(title: String, body: String?, idempotencyKey: String? = nil) async throws(ClientError) -> Announcement {
        try await send(.post, path: "announcements", body: WriteBody(title: title, body: body.map(BodyChange.set) ?? .clear), key: idempotencyKey).announcement()
    }

    /// Replaces an announcement's title and body. With `ifMatch` (an `Announcement.revision`),
    /// fails with `changedBySomeoneElse` if it changed since.
    public func replace(id: Int, title: String, body: String?, ifMatch: String? = nil, idempotencyKey: String? = nil) async throws(ClientError) -> Announcement {
        let body = WriteBody(title: title, body: body.map(BodyChange.set) ?? .clear)
        return try await send(.put, path: "announcements/\(id)", body: body, ifMatch: ifMatch, key: idempotencyKey).announcement()
    }

    /// Changes only what is given: the title when not nil, the body unless `.keep`.
    public func update(id: Int, title: String? = nil, body: BodyChange = .keep, ifMatch: String? = nil, idempotencyKey: String? = nil) async throws(ClientError) -> Announcement {
        try await send(.patch, path: "announcements/\(id)", body: WriteBody(title: title, body: body), ifMatch: ifMatch, key: idempotencyKey).announcement()
    }

    /// Deletes an announcement.
    public func delete(id: Int, ifMatch: String? = nil, idempotencyKey: String? = nil) async throws(ClientError) {
        try await send(.delete, path: "announcements/\(id)", ifMatch: ifMatch, key: idempotencyKey).checkDeleted()
    }

    /// Erases every title and body announcement `id` ever had (live or deleted), for `reason`
    /// (an `admin`'s token): what the `erased` event records. Erasing it again is a
    /// `status(410, …)`: a retry of an erasure that landed says so too.
    public func erase(id: Int, reason: String) async throws(ClientError) -> Erasure {
        try await send(.post, path: "announcements/\(id)/erase", body: EraseBody(reason: reason)).decode(Erasure.self)
    }

    private func list<Item: Decodable>(
        version: APIVersion, offset: Int, max: Int, sort: SortField, order: SortOrder
    ) async throws(ClientError) -> Page<Item> {
        let query = [
            URLQueryItem(name: "offset", value: String(offset)), URLQueryItem(name: "max", value: String(max)),
            URLQueryItem(name: "sort", value: sort.rawValue), URLQueryItem(name: "order", value: order.rawValue),
        ]
        return try await page(query: query, version: version, offset: offset)
    }

    private func page<Item: Decodable>(query: [URLQueryItem], version: APIVersion, offset: Int) async throws(ClientError) -> Page<Item> {
        let response = try await send(.get, path: "announcements", query: query, version: version, cached: true)
        let items = try response.decode([Item].self)
        let total = response.header("X-Total-Count").flatMap(Int.init) ?? offset + items.count
        return Page(items: items, total: total, offset: offset)
    }
}

/// The JSON of an erasure.
struct EraseBody: Encodable {
    var reason: String
}

/// The JSON of a write: fields left out are left alone (PATCH); POST and PUT send both.
struct WriteBody: Encodable {
    var title: String?
    var body: BodyChange

    private enum CodingKeys: String, CodingKey {
        case title, body
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(title, forKey: .title)
        switch body {
        case .keep: break
        case .set(let text): try container.encode(text, forKey: .body)
        case .clear: try container.encodeNil(forKey: .body)
        }
    }
}
