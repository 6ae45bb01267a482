import AnnouncementsStore
import HTTPTypes
import Hummingbird

/// Read-your-writes across nodes: a request with `Min-Seq: N` is answered from a state that holds
/// the log up to seq N at least. Every write answers with `Log-Seq`, the seq its answer reflects;
/// a client that writes through one node and reads through another sends it back as `Min-Seq`.
/// A node that has not yet taken in seq N waits for it, at most `wait`, then answers 503.
///
/// One node alone always has every seq it answered with: the header costs nothing there.
struct ReadYourWritesMiddleware<Context: RequestContext>: RouterMiddleware {
    let store: EventStore
    var wait = Duration.seconds(5)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let value = request.headers[.minSeq] else { return try await next(request, context) }
        guard let seq = Int(value), seq >= 0 else {
            throw APIError(.badRequest, "Min-Seq must be a whole number of 0 or more (the Log-Seq a write answered with), not \"\(value)\"")
        }
        if seq > store.lastSeq, await !store.waitUntilSeq(seq, upTo: wait) {
            throw APIError(
                .serviceUnavailable,
                "this node has the log up to seq \(store.lastSeq): seq \(seq) has not reached it within \(wait.components.seconds) s; try again",
                headers: [.retryAfter: "1"]
            )
        }
        return try await next(request, context)
    }
}
