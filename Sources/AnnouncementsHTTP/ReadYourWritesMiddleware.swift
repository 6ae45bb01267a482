import AnnouncementsStore
import HTTPTypes
import Hummingbird

/// Read-your-writes across nodes: a request with `Min-Seq: N` is answered from a state that holds
/// the log up to seq N at least. Every write answers with `Log-Seq`, the seq its answer reflects;
/// a client that writes through one node and reads through another sends it back as `Min-Seq`.
/// A node that has not yet taken in seq N waits for it, at most `wait`, then answers 503. A
/// server alone on its log has every seq it answered with: a `Min-Seq` beyond its last is a 409
/// at once (the seq came from elsewhere, or the log was restored from an older backup). Only a
/// caller who may read gets that far: any other gets the read routes' 400, 401 or 403 at once.
struct ReadYourWritesMiddleware<Context: RequestContext>: RouterMiddleware {
    let store: EventStore
    /// Who may read: checked before the wait, which holds the connection and, on a shared log,
    /// asks the database.
    let access: Access
    var wait = Duration.seconds(5)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let value = request.headers[.minSeq] else { return try await next(request, context) }
        _ = try access.reader(request)
        guard let seq = Int(value), seq >= 0 else {
            throw APIError(.badRequest, "Min-Seq must be a whole number of 0 or more (the Log-Seq a write answered with), not \"\(value)\"")
        }
        if await !store.waitUntilSeq(seq, upTo: wait) {
            let lastSeq = store.seq
            guard store.isShared else {
                // No other process appends to this log: that seq will never come.
                var error = APIError(
                    .conflict,
                    "Min-Seq \(seq) is beyond the end of the log, which ends at seq \(lastSeq), and no other server appends to it: the seq came from another log, or this one was restored from an older backup"
                )
                error.details = [.init("minSeq", .integer(seq)), .init("lastSeq", .integer(lastSeq))]
                throw error
            }
            var error = APIError(
                .serviceUnavailable,
                "this node has the log up to seq \(lastSeq): seq \(seq) has not reached it within \(wait.components.seconds) s; try again",
                headers: [.retryAfter: "1"]
            )
            error.details = [.init("minSeq", .integer(seq)), .init("lastSeq", .integer(lastSeq))]
            throw error
        }
        return try await next(request, context)
    }
}
