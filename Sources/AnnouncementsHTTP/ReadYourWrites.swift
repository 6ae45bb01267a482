import AnnouncementsStore
import HTTPTypes
import Hummingbird

/// Read-your-writes across nodes: a read with `Min-Seq: N` is answered from a state that holds
/// the log up to seq N at least. Every write answers with `Log-Seq`, the seq its answer reflects;
/// a client that writes through one node and reads through another sends it back as `Min-Seq`.
/// A node that has not yet taken in seq N waits for it, at most `wait`, then answers 503. A
/// server alone on its log has every seq it answered with: a `Min-Seq` beyond its last is a 409
/// at once (the seq came from elsewhere, or the log was restored from an older backup).
///
/// The reads of the state (the announcements, their histories, the feed) ask for it once they
/// have let the caller in: a caller they refuse gets the refusal at once, without a wait (which
/// holds the connection and, on a shared log, asks the database) and without a word about the
/// log. Every other request ignores the header: a write is decided on the newest state the
/// writer role's holder has, and `/health`, `/metrics`, `/openapi.yaml` and the web client's pages
/// look at no seq.
struct ReadYourWrites: Sendable {
    let store: EventStore
    var wait = Duration.seconds(5)

    /// Returns once the state holds the seq the request's `Min-Seq` names (at once without one).
    func reach(_ request: Request) async throws(APIError) {
        guard let value = request.headers[.minSeq] else { return }
        guard let seq = Int(value), seq >= 0 else {
            throw APIError(.badRequest, "Min-Seq must be a whole number of 0 or more (the Log-Seq a write answered with), not \"\(value)\"")
        }
        guard await !store.waitUntilSeq(seq, upTo: wait) else { return }
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
}
