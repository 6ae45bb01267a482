import AnnouncementsDomain
import AnnouncementsStore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// The read side of the API: lists and single announcements in both versions, and health.
struct ReadRoutes: Sendable {
    let store: EventStore
    let access: Access
    let defaultVersion: APIVersion
    let feedHeartbeat: Duration
    let streams: StreamSlots
    let cache = RepresentationCache()
    let frames = EventStream.Frames()
    let healthBody = HealthBody()
    /// `Min-Seq`, for each read once it has let its caller in.
    var readYourWrites: ReadYourWrites { ReadYourWrites(store: store) }

    /// The largest page a client may ask for.
    static let maxPageSize = 100

    func add(to router: Router<AnnouncementsRequestContext>) {
        // An erased announcement's texts are not kept in encoded answers either.
        store.whenErased { [weak cache] ids, seq in cache?.forget(erased: ids, at: seq) }
        router.get("health") { _, _ in health() }
        for (prefix, version) in [("", nil)] + APIVersion.allCases.map({ ($0.pathPrefix, $0) }) as [(String, APIVersion?)] {
            let group = router.group(RouterPath(prefix))
            // Links to other pages name the route's own path, not the request's (`//announcements`
            // reaches the route too, and as a link it would name a host).
            let path = prefix.isEmpty ? "/announcements" : "/\(prefix)/announcements"
            group.get("announcements") { request, _ in try await list(request, forced: version, path: path) }
            group.get("announcements/:id") { request, context in try await item(request, context, forced: version) }
            group.get("announcements/:id/history") { request, context in try await history(request, context, forced: version) }
        }
        router.get("events") { request, context in try await events(request, context) }
        // The router's own HEAD (`autoGenerateHeadEndpoints`) would say `Content-Length: 0` for
        // the stream, which its GET never does (RFC 9110 9.3.2: a HEAD's headers are the GET's):
        // this one keeps its lack of a length (`MethodsMiddleware` drops the body).
        router.head("events") { request, context in try await events(request, context) }
    }

    // MARK: - Handlers

    /// `/health`: 200 while writes can succeed, else a 503 saying why (see `HealthBody`); never
    /// kept by a cache (a proxy that kept a 200 would hide the next 503).
    private func health() -> Response {
        let health = store.health
        var response = Response.json(healthBody.body(health, seq: store.seq) { store.head }, status: health.isOK ? .ok : .serviceUnavailable)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func list(_ request: Request, forced: APIVersion?, path: String) async throws -> Response {
        // A past state is an auditor's (or an admin's) to read, as for one announcement.
        _ = try request.uri.queryParameters["asOf"] == nil ? access.reader(request) : access.require(.audit, request)
        try await readYourWrites.reach(request)
        let point = try asOf(request)
        let version = try self.version(of: request, forced: forced)
        let media = try MediaType.negotiate(request)
        let query = try pageQuery(request.uri)
        if let search = try searchQuery(request.uri, asOf: point) {
            return try await list(searching: search, request, path: path, query, version, media)
        }
        if let point {
            return try await list(asOf: point, request, path: path, query, version, media)
        }
        let key = RepresentationCache.PageKey(version: version, media: media, query: query)
        let coding = ContentCoding.preferred(by: request)
        // This thread's copy when it has one of the current state (no lock another core takes).
        let (body, extent, plainTag) = try cache.threadsPage(key, seq: store.seq, coding: coding) ?? {
            let snapshot = store.snapshot
            return try cache.page(
                key, seq: snapshot.seq, coding: coding,
                tag: { Self.listTag(version, state: "\(snapshot.seq)-\(store.lineTag(of: snapshot.seq))", query, media) }
            ) { () throws(APIError) in
                try Self.encodeList(snapshot, query, version, media)
            }
        }()
        return try page(request, path: path, body, extent, plainTag: plainTag, query, version, media)
    }

    /// `GET /announcements?asOf=…`: a page of the list as it was at a time or seq.
    private func list(asOf point: LogPoint, _ request: Request, path: String, _ query: PageQuery, _ version: APIVersion, _ media: MediaType) async throws -> Response {
        let (model, erasures) = try await store.model(asOf: point)
        let (encoded, extent) = try Self.encodeList(model, query, version, media)
        let body = CodedBody(encoded, compressedWith: ContentCoding.preferred(by: request))
        // The state up to a seq changes only when an announcement in it is erased.
        let plainTag = Self.listTag(version, state: "asof-\(model.seq)-\(store.lineTag(of: model.seq))-\(erasures)", query, media)
        return try page(request, path: path, body, extent, plainTag: plainTag, query, version, media, asOf: point)
    }

    /// The answer with a page of the list (live, or as it was at `point`): its ETag (the plain tag
    /// and the body's coding), a 304 when `If-None-Match` names it, `X-Total-Count` and `Link`.
    func page(
        _ request: Request, path: String, _ body: CodedBody, _ extent: RepresentationCache.PageExtent, plainTag: String,
        _ query: PageQuery, _ version: APIVersion, _ media: MediaType, asOf point: LogPoint? = nil, searched: String? = nil
    ) throws(APIError) -> Response {
        let etag = ContentCoding.tagged(plainTag, body.coding)
        var response = try Self.conditional(request, etag: etag) ?? .encoded(body, media)
        response.headers[.totalCount] = String(extent.total)
        if let link = links(path, query: query, extent, asOf: point, searched: searched) { response.headers[.link] = link }
        return versioned(response, version, etag: etag, for: request)
    }

    /// A list page's ETag (before its coding): the version, the state it was made from (`state`:
    /// the seq and its line's tag, or the past point's), the page and its order, and the media.
    private static func listTag(_ version: APIVersion, state: String, _ query: PageQuery, _ media: MediaType) -> String {
        "\"list-\(version.rawValue)-\(state)-\(query.offset)-\(query.limit)-\(query.sort.rawValue)-\(query.order.rawValue)\(media.tagSuffix)\""
    }

    private func item(_ request: Request, _ context: AnnouncementsRequestContext, forced: APIVersion?) async throws -> Response {
        // A past state is no longer live: only an auditor's (or an admin's) to read, checked
        // before the point is (a 401 or 403 says nothing of the parameter).
        _ = try request.uri.queryParameters["asOf"] == nil ? access.reader(request) : access.require(.audit, request)
        try await readYourWrites.reach(request)
        let point = try asOf(request)
        let version = try self.version(of: request, forced: forced)
        let id = try AnnouncementTag.id(request, context)
        let media = try MediaType.negotiate(request)
        if let point {
            return try await item(id, asOf: point, request, version, media)
        }
        let coding = ContentCoding.preferred(by: request)
        let key = RepresentationCache.ItemKey(id: id, media: media, detailed: version == .v3)
        // This thread's copy when it has one of the current state (see `list`).
        let (body, plainTag) = try cache.threadsItem(key, seq: store.seq, coding: coding) ?? {
            let snapshot = store.snapshot
            guard let announcement = snapshot.announcement(id: id) else { throw StoreError.notFound(id: id) }
            return try cache.item(
                announcement, seq: snapshot.seq, media: media, detailed: key.detailed, coding: coding,
                tag: { AnnouncementTag.etag(announcement, media, version, line: store.lineTag(of: announcement.revision)) }
            ) { () throws(APIError) in
                try Self.encode(announcement, media, version)
            }
        }()
        let etag = ContentCoding.tagged(plainTag, body.coding)
        return versioned(try Self.conditional(request, etag: etag) ?? .encoded(body, media), version, etag: etag, for: request)
    }

    // MARK: - Encoding

    /// The most bytes a page of the list holds, as a page of the feed: an announcement that would
    /// take it past them is left for the next page (a page always holds one), which `Link: next`
    /// points at. A hundred announcements of a megabyte would otherwise be a 100 MB answer to
    /// anyone, encoded and compressed for seconds on a thread every request shares, and held for
    /// as long as its reader is slow.
    static let pageByteLimit = EventStore.maxFeedPageBytes

    /// A page of announcements (v1), summaries (v2) or v3's list items, at most about
    /// `pageByteLimit` bytes; a 406 when XML cannot carry one of them.
    static func encodeList(_ snapshot: ReadModel, _ query: PageQuery, _ version: APIVersion, _ media: MediaType) throws(APIError) -> (ByteBuffer, RepresentationCache.PageExtent) {
        try encodeList(snapshot.announcements(query), version, media)
    }

    /// `page` in `version` and `media` (see `encodeList`).
    static func encodeList(_ page: Page<Announcement>, _ version: APIVersion, _ media: MediaType) throws(APIError) -> (ByteBuffer, RepresentationCache.PageExtent) {
        switch version {
        case .v1: try render(page, media, json: { $0.announcement($1) }, xml: XMLRepresentation.announcement)
        case .v2: try render(page, media, json: { $0.summary($1.summary) }, xml: { (item, xml) throws(APIError) in try XMLRepresentation.summary(item.summary, into: &xml) })
        case .v3: try render(page, media, json: { $0.detailed($1, body: false) }, xml: { (item, xml) throws(APIError) in try XMLRepresentation.detailed(item, body: false, into: &xml) })
        }
    }

    /// A page as a JSON array or an XML `<announcements>` list, each item written by `json` or
    /// `xml`, without the items that would take it past `pageByteLimit` (but the first).
    private static func render<Item>(
        _ page: Page<Item>,
        _ media: MediaType,
        json element: (inout JSONBytes, Item) -> Void,
        xml: (Item, inout String) throws(APIError) -> Void
    ) throws(APIError) -> (ByteBuffer, RepresentationCache.PageExtent) {
        var count = 0
        switch media {
        case .json:
            var json = JSONBytes()
            json.raw("[")
            for item in page.items {
                var encoded = JSONBytes()
                element(&encoded, item)
                guard count == 0 || json.bytes.count + encoded.bytes.count + 2 <= pageByteLimit else { break }
                if count > 0 { json.raw(",") }
                json.raw(encoded.bytes)
                count += 1
            }
            json.raw("]")
            return (ByteBuffer(bytes: json.bytes), .init(total: page.total, count: count))
        case .xml, .textXML:
            let end = "</announcements>"
            var text = XMLRepresentation.declaration + "<announcements>"
            for item in page.items {
                var encoded = ""
                try xml(item, &encoded)
                guard count == 0 || text.utf8.count + encoded.utf8.count + end.utf8.count <= pageByteLimit else { break }
                text += encoded
                count += 1
            }
            return (ByteBuffer(string: text + end), .init(total: page.total, count: count))
        }
    }

    /// One announcement in `media` and `version` (v1's form, or v3's); a 406 when XML cannot carry it.
    static func encode(_ announcement: Announcement, _ media: MediaType, _ version: APIVersion) throws(APIError) -> ByteBuffer {
        switch media {
        case .json:
            return encode(announcement, version)
        case .xml, .textXML:
            var xml = XMLRepresentation.declaration
            if version == .v3 {
                try XMLRepresentation.detailed(announcement, body: true, into: &xml)
            } else {
                try XMLRepresentation.announcement(announcement, into: &xml)
            }
            return ByteBuffer(string: xml)
        }
    }

    /// One announcement as JSON, which carries every value.
    static func encode(_ announcement: Announcement, _ version: APIVersion) -> ByteBuffer {
        var json = JSONBytes()
        if version == .v3 { json.detailed(announcement, body: true) } else { json.announcement(announcement) }
        return ByteBuffer(bytes: json.bytes)
    }

    // MARK: - Negotiation

    /// The version a request asks for: the path prefix, else `Accept-Version`, else the default.
    /// An `Accept-Version` that names no version is a 406 even under a prefix.
    func version(of request: Request, forced: APIVersion?) throws(APIError) -> APIVersion {
        let asked = try APIVersion(of: request)
        return forced ?? asked ?? defaultVersion
    }

    /// `response` to `request` with the headers of every representation of a versioned resource:
    /// what it varies by (the same for each representation, compressed or not, 200 or 304), its
    /// version and its ETag.
    /// Every read is `Cache-Control: no-cache`: a cache may keep it, but asks (with its ETag, a
    /// 304 when nothing changed) before each use, so that no proxy serves an announcement deleted
    /// or erased since it stored it. A read that the web client's session cookie may have
    /// authorised (a history, a past state, any read under `reads: token`) is `private` too: a
    /// shared cache keeps no answer to a request with `Authorization` (RFC 9111 3.5), but nothing
    /// keeps it from storing one to a cookie.
    func versioned(_ response: Response, _ version: APIVersion, etag: String, for request: Request) -> Response {
        var response = response
        let bySession = request.headers[.authorization] == nil && WebSession.token(in: request) != nil
        response.headers[.cacheControl] = bySession ? "private, no-cache" : "no-cache"
        response.headers[.vary] = "Accept-Version, Accept, Accept-Encoding"
        response.headers[.apiVersion] = version.rawValue
        response.headers[.eTag] = etag
        return response
    }

    /// A read's preconditions (RFC 9110 13.2.2), on the ETag of the representation selected for
    /// this request (so a tag of the compressed body does not match the plain one): a 412 when
    /// `If-Match` names none of it (compared strongly), else a 304 when `If-None-Match` names it
    /// (or is `*`). Without `wildcard`, only the tag itself counts for `If-None-Match`.
    static func conditional(_ request: Request, etag: String, wildcard: Bool = true) throws(APIError) -> Response? {
        if let tags = try AnnouncementTag.tags(ifMatch: request), !tags.contains(etag) {
            throw APIError(.preconditionFailed, "If-Match names no tag of the representation this request selects, whose ETag is \(etag) (If-Match compares strongly: a weak W/ tag never matches)")
        }
        guard let tags = try AnnouncementTag.tags(ifNoneMatch: request) else { return wildcard ? Response(status: .notModified) : nil }
        guard tags.contains(etag) else { return nil }
        return Response(status: .notModified)
    }

    // MARK: - Paging

    func pageQuery(_ uri: URI) throws(APIError) -> PageQuery {
        let parameters = uri.queryParameters
        var query = PageQuery()
        if let text = parameters["max"] {
            guard let max = Int(String(text)), max >= 0 else {
                throw APIError(.badRequest, "query parameter `max` must be a whole number, 0 or more (more than \(Self.maxPageSize) is taken as \(Self.maxPageSize)), not \"\(text)\"")
            }
            query.limit = min(max, Self.maxPageSize)
        }
        if let text = parameters["offset"] {
            guard let offset = Int(String(text)), offset >= 0 else {
                throw APIError(.badRequest, "query parameter `offset` must be a whole number, 0 or more, not \"\(text)\"")
            }
            query.offset = offset
        }
        if let text = parameters["sort"] {
            guard let sort = PageQuery.Sort(rawValue: String(text)) else {
                throw APIError(.badRequest, "query parameter `sort` must be `id` or `title`, not \"\(text)\"")
            }
            query.sort = sort
        }
        if let text = parameters["order"] {
            guard let order = PageQuery.Order(rawValue: String(text)) else {
                throw APIError(.badRequest, "query parameter `order` must be `asc` or `desc`, not \"\(text)\"")
            }
            query.order = order
        }
        return query
    }

    /// `Link: <…?offset=10&max=10…>; rel="next", <…>; rel="prev"`, or nil on a single page; with
    /// the search's `q` (`searched`, encoded) or the past point.
    private func links(_ path: String, query: PageQuery, _ extent: RepresentationCache.PageExtent, asOf point: LogPoint? = nil, searched: String? = nil) -> String? {
        guard query.limit > 0 else { return nil }
        let past = point.map { "&asOf=\($0)" } ?? ""
        // A search has its own order: its pages name `q`, never `sort` or `order` (a 400 with it).
        let order = searched.map { "&q=\($0)" } ?? "&sort=\(query.sort.rawValue)&order=\(query.order.rawValue)"
        func url(_ offset: Int) -> String {
            "<\(path)?offset=\(offset)&max=\(query.limit)\(order)\(past)>"
        }
        var links: [String] = []
        // After the items this page holds (fewer than `max` past `pageByteLimit`). Written so
        // that an offset near Int.max cannot overflow.
        if query.offset < extent.total - extent.count { links.append("\(url(query.offset + extent.count)); rel=\"next\"") }
        if query.offset > 0 { links.append("\(url(max(0, query.offset - query.limit))); rel=\"prev\"") }
        return links.isEmpty ? nil : links.joined(separator: ", ")
    }
}
