import Dispatch
import NIOCore
import PostgresNIO
import Synchronization

/// The answer to a query (a future answered on SwiftNIO's event loop), waited for on a thread of
/// the log's own (the committer's, a reader's). Its callback is registered when it is made, so
/// that of several queries sent together (`BEGIN`, the statement, `COMMIT`), each is taken as it
/// comes, on the event loop: a wait for one already answered returns at once, where registering
/// then would cost a round trip through the event loop (a wake of each thread) for each.
final class PendingAnswer<T: Sendable>: Sendable {
    private let answered = DispatchSemaphore(value: 0)
    private let outcome = Mutex<Result<T, any Error>?>(nil)

    init(_ future: EventLoopFuture<T>) {
        future.whenComplete { result in
            self.outcome.withLock { $0 = result }
            self.answered.signal()
        }
    }

    /// The answer, waited for at most `timeout`; then `connection` is closed (a dead server or
    /// network, which a session does not always notice: the query's outcome is unknown), and it
    /// fails. (One wait per answer: the semaphore is signalled once.)
    func wait(upTo timeout: Duration, closing connection: PostgresConnection?) throws -> T {
        guard answered.wait(timeout: .now() + timeout.dispatchInterval) == .success, let result = outcome.withLock({ $0 }) else {
            if let connection { PostgresLog.closeSoon(connection) }
            throw PostgresLogFailure("PostgreSQL did not answer within \(timeout) (the connection is closed; the query's outcome is unknown)", isTimeout: true)
        }
        return try result.get()
    }
}
