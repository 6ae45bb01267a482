import AnnouncementsDomain
import AnnouncementsStore
import HTTPTypes
import Hummingbird
import NIOCore

/// The audit side of the read API: an announcement's history, an announcement as it was, and the
/// feed of stored events. Each event is sent exactly as its log line holds it, to auditors and
/// admins; the feed's public form (`FeedForm`) sends anyone else what each event did, without text.
extension ReadRoutes {
    /// The most events one feed request returns, and how many it returns by default.
    static let feedDefault = 100

    /// `GET /announcements/{id}/history`: the announcement's events, oldest first (deleted ones too).
    func history(_ request: Request, _ context: AnnouncementsRequestContext, forced: APIVersion?) async throws -> Response {
        // Every history holds past states (the texts before each edit): an auditor's to read.
        _ = try access.require(.audit, request)
        try await readYourWrites.reach(request)
        let version = try self.version(of: request, forced: forced)
        let id = try AnnouncementTag.id(request, context)
        try MediaType.requireJSON(request, "an announcement's history")
        let notFound = APIError(.notFound, "announcement \(id) was never created")
        // The ETag comes from the index: a 304 reads nothing from the log.
        guard let last = store.lastEvent(of: id) else { throw notFound }
        let plainTag = "\"history-\(id)-\(last.seq)-\(last.tag)\""
        let coding = ContentCoding.preferred(by: request)
        // Whether this history compresses is known once it is read, but a tag naming the coding
        // went out only with a compressed body, which the same events compress to again: a 304
        // without reading. So does the plain tag for a client that takes no coding. (`If-Match`
        // is judged on the body's own tag: the history may not compress.)
        let known = coding.map { $0.tagged(plainTag) } ?? plainTag
        if request.headers[.ifMatch] == nil, let notModified = try Self.conditional(request, etag: known, wildcard: coding == nil) {
            return versioned(notModified, version, etag: known, for: request)
        }
        guard let lines = try await store.historyLines(id: id) else { throw notFound }
        let body = CodedBody(ByteBuffer(bytes: Self.array(lines)), compressedWith: coding)
        let etag = ContentCoding.tagged(plainTag, body.coding)
        return versioned(try Self.conditional(request, etag: etag) ?? .encoded(body, .json), version, etag: etag, for: request)
    }

    /// `GET /announcements/{id}?asOf=…`: the announcement as it was at a time or seq.
    func item(_ id: Int, asOf point: LogPoint, _ request: Request, _ version: APIVersion, _ media: MediaType) async throws -> Response {
        guard let announcement = try await store.announcement(id: id, asOf: point) else {
            throw APIError(.notFound, "announcement \(id) did not exist at \(request.uri.queryParameters["asOf"].map(String.init) ?? "that point") (it was created later, or deleted by then)")
        }
        let body = CodedBody(try Self.encode(announcement, media, version), compressedWith: ContentCoding.preferred(by: request))
        let etag = ContentCoding.tagged(AnnouncementTag.etag(announcement, media, version, line: store.lineTag(of: announcement.revision)), body.coding)
        return versioned(try Self.conditional(request, etag: etag) ?? .encoded(body, media), version, etag: etag, for: request)
    }

    /// `GET /events?after=SEQ&limit=N`: the stored events after SEQ, oldest first; with
    /// `Accept: text/event-stream`, a stream of them that follows the log (see `EventStream`).
    func events(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        let form = FeedForm(for: try access.reader(request))
        try await readYourWrites.reach(request)
        let parameters = request.uri.queryParameters
        // `Last-Event-ID` (a reconnecting stream's resume point) wins over `after`; both must be valid.
        let afterParameter = try Self.wholeNumber(parameters["after"].map(String.init), name: "after", default: 0, minimum: 0)
        let after = try Self.wholeNumber(request.headers[.lastEventID], name: "Last-Event-ID", default: afterParameter, minimum: 0)
        // A position the log never reached (it was restored from an older backup) would wait for
        // events that come under other seqs: refuse it, before any stream starts.
        let lastSeq = store.lastSeq
        if after > lastSeq {
            let source = request.headers[.lastEventID] == nil ? "after=\(after)" : "Last-Event-ID: \(after)"
            throw APIError.beyondLog(after: after, source: source, lastSeq: lastSeq)
        }
        if MediaType.asksForStream(request) {
            guard let slot = streams.take() else { throw APIError.tooManyStreams(streams.maximum) }
            let closure = ConnectionClosure(context.connectionClosed)
            return EventStream(store: store, after: after, form: form, heartbeat: feedHeartbeat, frames: frames, slot: slot, closure: closure).response()
        }
        try MediaType.requireJSON(request, "the event feed")
        let limit = try Self.wholeNumber(parameters["limit"].map(String.init), name: "limit", default: Self.feedDefault, minimum: 1)
        let lines = try form.lines(await store.eventLines(after: after, limit: limit), after: after)
        let body = CodedBody(ByteBuffer(bytes: Self.array(lines)), compressedWith: ContentCoding.preferred(by: request))
        var response = Response.encoded(body, .json)
        // Taken after the read: a page whose last event has this seq reached the end of the log.
        response.headers[.logSeq] = String(store.lastSeq)
        // What the page depends on: a stream or a page (Accept), where it starts (Last-Event-ID wins
        // over `after`), its form (the token's role) and its coding.
        response.headers[.vary] = "Accept, Accept-Encoding, Authorization, Last-Event-ID"
        // A page changes: its lines are sealed by an erasure, the last one grows. A proxy that
        // caches 200s by default (Varnish: 2 minutes) would serve erased texts, or an old end; and
        // a page has no validator to ask with: none keeps it.
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The `asOf` query parameter: an RFC 3339 time or a seq; nil when absent.
    func asOf(_ request: Request) throws(APIError) -> LogPoint? {
        guard let text = request.uri.queryParameters["asOf"].map(String.init) else { return nil }
        guard let point = LogPoint(text) else {
            throw APIError(.badRequest, "query parameter `asOf` must be an RFC 3339 time (2026-11-21T09:30:00Z) or a seq (42), not \"\(text)\"")
        }
        return point
    }

    static func wholeNumber(_ text: String?, name: String, default value: Int, minimum: Int) throws(APIError) -> Int {
        guard let text else { return value }
        guard let number = Int(text), number >= minimum else {
            throw APIError(.badRequest, "`\(name)` must be a whole number of at least \(minimum), not \"\(text)\"")
        }
        return number
    }

    /// `[line,line,…]`: stored lines are JSON objects already.
    private static func array(_ lines: [ArraySlice<UInt8>]) -> [UInt8] {
        var json = JSONBytes()
        json.array(lines) { $0.raw($1) }
        return json.bytes
    }
}
