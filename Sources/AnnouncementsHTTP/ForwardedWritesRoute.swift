import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// `POST /_nodes/writes`: the writes another node of a shared log sends on to this one, the
/// writer role's holder (`WriteForwarder`), several in one request. Each goes through the whole
/// router as if it had come alone (its own token checked, its own access-log line and request id,
/// its errors answered as any), marked as forwarded (it is made here, never sent on again), and
/// all of them at once, so that they go into the same commits; the answer holds each one's answer,
/// in order. The request itself needs a writer's token (no one else makes this node read a
/// request that large), and is served only on a shared log.
struct ForwardedWritesRoute: Sendable {
    let access: Access
    let maxRequestBytes: Int
    /// The router's responder, which each write goes through: set once the router has every route.
    let responder = RouterResponderSlot()

    /// The methods of the writes a node sends on.
    static let methods: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]

    /// Whether a node sends on `method` to `path`: the API's writes (`/announcements` and
    /// `/announcements/{id}`, with or without a version's prefix), not an erasure, a web form's
    /// post, nor anything else.
    static func isForwardable(_ method: HTTPRequest.Method, _ path: String) -> Bool {
        guard methods.contains(method) else { return false }
        // As the router reads it: empty components (`//`, a trailing `/`) count for nothing.
        var components = path.prefix { $0 != "?" }.split(separator: "/")[...]
        if let first = components.first, APIVersion.allCases.contains(where: { $0.pathPrefix == first }) { components = components.dropFirst() }
        return components.first == "announcements" && components.count <= 2
    }

    func add(to router: Router<AnnouncementsRequestContext>) {
        router.post(RouterPath(ForwardedWrites.path)) { request, context in try await answer(request, context) }
    }

    private func answer(_ request: Request, _ context: AnnouncementsRequestContext) async throws -> Response {
        _ = try access.require(.changeOwn, request)
        guard request.headers[.contentType] == ForwardedWrites.contentType else {
            throw APIError(.unsupportedMediaType, "send the writes as \(ForwardedWrites.contentType): this route is for the nodes of a shared log")
        }
        let body = try await RequestBody.collect(request, maxBytes: ForwardedWrites.maxBytes(maxRequestBytes: maxRequestBytes), what: "the forwarded writes")
        let writes: [ForwardedWrites.Write]
        do {
            writes = try ForwardedWrites.writes(in: body)
        } catch {
            throw APIError(.badRequest, "the forwarded writes cannot be read: \(error)")
        }
        guard let responder = responder.value else { throw APIError(.serviceUnavailable, "the server is starting", headers: [.retryAfter: "1"]) }
        let answers = await withTaskGroup(of: (Int, ForwardedWrites.Answer).self, returning: [ForwardedWrites.Answer].self) { group in
            for (index, write) in writes.enumerated() {
                group.addTask { (index, await Self.answer(to: write, context, responder)) }
            }
            // In the order of the writes, whatever order they were answered in.
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return Response(
            status: .ok, headers: [.contentType: ForwardedWrites.contentType],
            body: .init(byteBuffer: ForwardedWrites.encode(answers))
        )
    }

    /// One write's answer, from the router as if it had come alone.
    private static func answer(
        to write: ForwardedWrites.Write, _ context: AnnouncementsRequestContext, _ responder: RouterResponder<AnnouncementsRequestContext>
    ) async -> ForwardedWrites.Answer {
        var fields = HTTPFields()
        for field in write.fields where !WriteForwarder.connectionFields.contains(field.name) { fields.append(field) }
        fields[WriteForwarder.forwardedField] = "1"
        fields[.contentLength] = String(write.body.readableBytes)
        let head = HTTPRequest(method: write.method, scheme: nil, authority: nil, path: write.path, headerFields: fields)
        let request = Request(head: head, body: .init(buffer: write.body))
        // Its own route, for its metrics and access-log line (a copy of the context shares the
        // batch's otherwise, with every other write in it).
        var context = context
        context.coreContext.endpointPath = EndpointPath()
        let response: Response
        do {
            guard isForwardable(write.method, write.path) else {
                throw APIError(.badRequest, "a node sends on the API's writes only (POST, PUT, PATCH, DELETE of announcements), not \(write.method) \(write.path)")
            }
            response = try await responder.respond(to: request, context: context)
        } catch let error as HTTPResponseError {
            // That refusal, or one of the middleware in front of `ErrorMiddleware`: answered as
            // the server answers it.
            response = (try? error.response(from: request, context: context)) ?? Response(status: error.status)
        } catch {
            response = unexpected(error, write, request, context)
        }
        do {
            return try await collected(response)
        } catch {
            let failed = unexpected(error, write, request, context)
            return (try? await collected(failed)) ?? ForwardedWrites.Answer(status: failed.status, fields: failed.headers, body: ByteBuffer())
        }
    }

    /// `response` with its body collected.
    private static func collected(_ response: Response) async throws -> ForwardedWrites.Answer {
        let collector = BodyCollector()
        try await response.body.write(collector)
        return ForwardedWrites.Answer(status: response.status, fields: response.headers, body: collector.bytes)
    }

    /// The answer to a write that failed with what no middleware made an answer of: said in this
    /// node's log, and answered as `ErrorMiddleware` answers an error it does not know.
    private static func unexpected(_ error: any Error, _ write: ForwardedWrites.Write, _ request: Request, _ context: AnnouncementsRequestContext) -> Response {
        context.logger.error("unexpected error", metadata: ["error": "\(error)", "forwarded": "\(write.method) \(write.path)"])
        let refusal = APIError(.internalServerError, "the server failed to answer; see its log")
        return (try? refusal.response(from: request, context: context)) ?? Response(status: refusal.status)
    }
}

/// The router's responder, for a route that sends requests through the router it is in: set once
/// every route is added (see `buildRouter`).
final class RouterResponderSlot: Sendable {
    private let slot = Mutex<RouterResponder<AnnouncementsRequestContext>?>(nil)

    var value: RouterResponder<AnnouncementsRequestContext>? { slot.withLock { $0 } }

    func set(_ responder: RouterResponder<AnnouncementsRequestContext>) {
        slot.withLock { $0 = responder }
    }
}

/// A response's body, collected.
private final class BodyCollector: ResponseBodyWriter, Sendable {
    private let collected = Mutex(ByteBuffer())

    var bytes: ByteBuffer { collected.withLock { $0 } }

    func write(_ buffer: ByteBuffer) async throws {
        collected.withLock { _ = $0.writeImmutableBuffer(buffer) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
