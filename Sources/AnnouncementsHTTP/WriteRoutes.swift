import AnnouncementsDomain
import AnnouncementsStore
import HTTPTypes
import Hummingbird
import NIOCore

/// The write side of the API: create, replace, update and delete, for tokens whose role writes.
/// A 2xx answer means the event is in the log and synced.
struct WriteRoutes: Sendable {
    let store: EventStore
    let access: Access
    let maxRequestBytes: Int
    /// Where writes go when another node of a shared log holds the writer role; nil: made here.
    let forwarder: WriteForwarder?

    func add(to router: Router<AnnouncementsRequestContext>) {
        for (prefix, version) in [("", nil)] + APIVersion.allCases.map({ ($0.pathPrefix, $0) }) as [(String, APIVersion?)] {
            let group = router.group(RouterPath(prefix))
            group.post("announcements") { request, context in try await made(request, context) { try await create($0, context, forced: version) } }
            group.put("announcements/:id") { request, context in try await made(request, context) { try await replace($0, context, forced: version) } }
            group.patch("announcements/:id") { request, context in try await made(request, context) { try await update($0, context, forced: version) } }
            group.delete("announcements/:id") { request, context in try await made(request, context) { try await delete($0, context) } }
            // An erasure is made where it comes: it can outlast a forward's wait, and is not
            // repeated by an idempotency key, so it could not be made again safely.
            group.post("announcements/:id/erase") { request, context in try await erase(request, context) }
        }
    }

    /// The answer to a write: the writer role's holder's, when the forwarder sends it there, else
    /// `write`'s, here.
    private func made(
        _ request: Request, _ context: AnnouncementsRequestContext, _ write: (Request) async throws -> Response
    ) async throws -> Response {
        // Only a writer's request goes on (a caller without a token, or whose role writes
        // nothing, gets its 401 or 403 here, before its body is read: its token would not open
        // the holder's route for the writes sent with it); the holder checks its rights on the
        // write.
        guard let forwarder, try access.caller(request)?.role.may(.changeOwn) == true else { return try await write(request) }
        let received = ContinuousClock.now
        switch try await forwarder.forward(request, context) {
        case .answered(let answer):
            return answer
        case .makeHere(let request, let madeKey):
            // Its wait for the writer role counts the time it waited for the holder. The key it
            // was sent with goes back, for a retry: the holder may commit it yet.
            do {
                var answer = try await EventStore.$receivedAt.withValue(received) { try await write(request) }
                if let madeKey { answer.headers[.idempotencyKey] = madeKey }
                return answer
            } catch let error as StoreError {
                guard let madeKey else { throw error }
                throw Self.refusal(ErrorMiddleware<AnnouncementsRequestContext>.apiError(error), madeKey: madeKey)
            } catch let refusal as APIError {
                guard let madeKey else { throw refusal }
                throw Self.refusal(refusal, madeKey: madeKey)
            }
        }
    }

    /// A refusal of a write made here after it was sent to the holder with the key made for it:
    /// the key comes back, and a 5xx says that the holder may still commit the write (its "nothing
    /// was written" is this node's), so that a retry uses the key and the write is made once.
    private static func refusal(_ refusal: APIError, madeKey: String) -> APIError {
        var refusal = refusal
        refusal.headers[.idempotencyKey] = madeKey
        if refusal.status.code >= 500 {
            refusal.message += " (this node had also sent the write to the writer role's holder, which may still commit it: retry with this answer's Idempotency-Key, \(madeKey), so that it is made once)"
        }
        return refusal
    }

    // MARK: - Handlers

    private func create(_ request: Request, _ context: AnnouncementsRequestContext, forced: APIVersion?) async throws -> Response {
        let writer = try access.require(.create, request).name
        let (version, media, key) = try headers(request, forced: forced)
        let fields = try await jsonObject(request, context)
        let draft = AnnouncementDraft(title: try fields.requiredTitle(), bodyText: try fields.body() ?? nil)
        let created = try await store.create(draft, by: writer, key: key)
        context.logger.debug("created announcement \(created.id)", metadata: ["writer": "\(writer)", "event.id": "\(created.id)"])
        var response = representation(created, media, version, status: .created)
        // Under the path's version prefix, if any: a client that cannot set headers follows it
        // to the representation its ETag names.
        response.headers[.location] = "\(forced.map { "/" + $0.pathPrefix } ?? "")/announcements/\(created.id)"
        return response
    }

    private func replace(_ request: Request, _ context: AnnouncementsRequestContext, forced: APIVersion?) async throws -> Response {
        let (writer, scope) = try changer(request)
        let (version, media, key) = try headers(request, forced: forced)
        let id = try AnnouncementTag.id(request, context)
        let fields = try await jsonObject(request, context)
        let draft = AnnouncementDraft(title: try fields.requiredTitle(), bodyText: try fields.body() ?? nil)
        let ifMatch = try expected(request, id: id)
        let replaced = try await store.update(
            id: id, AnnouncementPatch(replacingWith: draft), by: writer, scope: scope,
            expectedRevision: ifMatch.revision, expectedLine: ifMatch.line, key: key
        )
        context.logger.debug("replaced announcement \(id)", metadata: ["writer": "\(writer)", "event.id": "\(id)"])
        return representation(replaced, media, version, status: .ok)
    }

    private func update(_ request: Request, _ context: AnnouncementsRequestContext, forced: APIVersion?) async throws -> Response {
        let (writer, scope) = try changer(request)
        let (version, media, key) = try headers(request, forced: forced)
        let id = try AnnouncementTag.id(request, context)
        let fields = try await jsonObject(request, context)
        let patch = AnnouncementPatch(title: try fields.title(), body: try fields.body().map { $0.map { BodyChange.set($0) } ?? .clear })
        let ifMatch = try expected(request, id: id)
        let updated = try await store.update(id: id, patch, by: writer, scope: scope, expectedRevision: ifMatch.revision, expectedLine: ifMatch.line, key: key)
        context.logger.debug("updated announcement \(id)", metadata: ["writer": "\(writer)", "event.id": "\(id)"])
        return representation(updated, media, version, status: .ok)
    }

    private func delete(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        let (writer, scope) = try changer(request)
        _ = try APIVersion(of: request)
        let key = try idempotencyKey(request)
        let id = try AnnouncementTag.id(request, context)
        let ifMatch = try expected(request, id: id)
        try await store.delete(id: id, by: writer, scope: scope, expectedRevision: ifMatch.revision, expectedLine: ifMatch.line, key: key)
        context.logger.debug("deleted announcement \(id)", metadata: ["writer": "\(writer)", "event.id": "\(id)"])
        // The delete's seq is at most the last one now: a read with it as Min-Seq sees the delete.
        return Response(status: .noContent, headers: [.logSeq: String(store.lastSeq)])
    }

    /// `POST /announcements/{id}/erase` with `{"reason": "…"}`: erases every text the announcement
    /// ever had from the log (see `EventStore.erase`); an admin's.
    private func erase(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        let writer = try access.require(.erase, request).name
        _ = try APIVersion(of: request)
        // Refused before anything is erased.
        try MediaType.requireJSON(request, "an erasure's answer")
        let id = try AnnouncementTag.id(request, context)
        let reason = try await EraseReason.read(request, context, maxBytes: maxRequestBytes)
        let erasure: EventStore.Erasure
        do {
            erasure = try await store.erase(id: id, by: writer, reason: reason)
        } catch StoreError.notFound {
            // A deleted announcement is erased as a live one is: this one never was.
            throw APIError(.notFound, "announcement \(id) was never created: there is nothing to erase")
        }
        context.logger.notice(erasure.finishedEarlier ? "finished the erasure of announcement \(id)" : "erased announcement \(id)", metadata: ["writer": "\(writer)", "event.id": "\(id)"])
        var json = JSONBytes()
        json.raw(#"{"id":"#); json.integer(id)
        json.raw(#","seq":"#); json.integer(erasure.seq)
        json.raw(#","sealedLines":"#); json.array(erasure.sealedLines) { $0.integer($1) }
        // An erasure asked for again after its overwrite failed: this finished that one.
        if erasure.finishedEarlier { json.raw(#","finishedEarlier":true"#) }
        json.raw("}")
        var response = Response.json(json.bytes, status: .ok)
        response.headers[.logSeq] = String(erasure.seq)
        return response
    }

    // MARK: - Pieces

    /// The written announcement in `media` and `version` (v1's form but in v3); in JSON when XML
    /// cannot carry a value it kept from an old log (an edit of the other field): the write is
    /// done, and a 406 would read as a refusal.
    private func representation(_ announcement: Announcement, _ media: MediaType, _ version: APIVersion, status: HTTPResponse.Status) -> Response {
        var answered = media
        let body: ByteBuffer
        do {
            body = try ReadRoutes.encode(announcement, media, version)
        } catch {
            body = ReadRoutes.encode(announcement, version)
            answered = .json
        }
        var response = Response.encoded(body, answered, status: status)
        response.headers[.eTag] = AnnouncementTag.etag(announcement, answered, version, line: store.lineTag(of: announcement.revision))
        // Its revision is the seq of its last event: the one this answer reflects.
        response.headers[.logSeq] = String(announcement.revision)
        return response
    }

    /// The writer of an edit or a delete, and which announcements its role lets it change (an
    /// author's own; the store refuses the others with `StoreError.notOwn`).
    private func changer(_ request: Request) throws(APIError) -> (name: String, scope: WriteScope) {
        let caller = try access.require(.changeOwn, request)
        return (caller.name, WriteScope(caller.role))
    }

    /// The headers a write with a body to answer checks before anything else: `Accept-Version`
    /// (406 if unsupported; writes answer the full announcement in every version, v3's form in
    /// v3; the path's version wins), `Accept`, and `Idempotency-Key`.
    private func headers(_ request: Request, forced: APIVersion?) throws(APIError) -> (APIVersion, MediaType, key: String?) {
        let asked = try APIVersion(of: request)
        return (forced ?? asked ?? .v1, try MediaType.negotiate(request), try idempotencyKey(request))
    }

    /// The `Idempotency-Key` header: 1 to 255 visible ASCII characters; nil without the header.
    private func idempotencyKey(_ request: Request) throws(APIError) -> String? {
        let values = request.headers[values: .idempotencyKey]
        guard let key = values.first else { return nil }
        guard values.count == 1 else {
            throw APIError(.badRequest, "send one Idempotency-Key header, not \(values.count)")
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw APIError(.badRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good key)")
        }
        return key
    }

    /// The revision the write may change and its line's tag: the one `If-Match` names (see
    /// `AnnouncementTag.expected`), else, with an `If-None-Match` that lets it through, the current
    /// one (`AnnouncementTag.unchanged`: a 412 when it names it, or is `*`); nils without either
    /// header, or for `If-Match: *`. RFC 9110 13.2.2's order: `If-Match` first, then `If-None-Match`.
    private func expected(_ request: Request, id: Int) throws(APIError) -> (revision: Int?, line: LineTag?) {
        let current = { store.snapshot.announcement(id: id).map { ($0.revision, store.lineTag(of: $0.revision)) } }
        let expected = try AnnouncementTag.expected(ifMatch: request, id: id, current: current)
        let unchanged = try AnnouncementTag.unchanged(ifNoneMatch: request, id: id, current: current)
        return (expected?.revision ?? unchanged?.revision, expected?.line ?? unchanged?.line)
    }

    /// The request's body as a JSON object, checking its type and size.
    private func jsonObject(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> JSONFields {
        let buffer = try await JSONBody.collect(request, maxBytes: maxRequestBytes, what: "the announcement")
        do throws(WriteFields.Problem) {
            return JSONFields(fields: try buffer.withUnsafeReadableBytes(WriteFields.read))
        } catch {
            switch error {
            case .notJSON(let problem):
                throw APIError(.badRequest, "the request body is not valid JSON (\(problem)): send the announcement as a JSON object like {\"title\": \"…\", \"body\": \"…\"}")
            case .notObject:
                throw APIError(.badRequest, "the request body must be a JSON object like {\"title\": \"…\", \"body\": \"…\"}")
            case .repeated(let name):
                throw APIError(.badRequest, "field `\(name)` appears twice in the request body: send each field once")
            case .unknown(let name):
                throw APIError(.badRequest, "unknown field `\(name)`: an announcement has `title` and `body`")
            }
        }
    }
}

/// The fields of a write's JSON body, type-checked one by one.
struct JSONFields {
    let fields: WriteFields

    /// The title, when present; 422 when it is null (a required field without a value, as a
    /// missing one is), 400 when it is another type.
    func title() throws(APIError) -> String? {
        switch fields.title {
        case .absent: nil
        case .value(let title): title
        case .null:
            throw APIError(.unprocessableContent, "the announcement is not valid: title must not be null (an announcement always has a title)", fieldErrors: [FieldProblem(field: "title", message: "must not be null")])
        case .wrongType: throw APIError(.badRequest, "field `title` must be a string")
        }
    }

    /// The title, which must be present (422 when it is missing, like a blank one).
    func requiredTitle() throws(APIError) -> String {
        guard let title = try title() else {
            throw APIError(.unprocessableContent, "the announcement is not valid: title is required", fieldErrors: [FieldProblem(field: "title", message: "is required")])
        }
        return title
    }

    /// nil when absent; `.some(nil)` for JSON null; 400 for anything but a string or null.
    func body() throws(APIError) -> JSONText?? {
        switch fields.body {
        case .absent: nil
        case .null: .some(nil)
        case .value(let body): .some(body)
        case .wrongType: throw APIError(.badRequest, "field `body` must be a string or null")
        }
    }
}
