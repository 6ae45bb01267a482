import Logging
import NIOCore
import PostgresNIO

/// The writer session's append procedure (`EventRows.appendProcedure`): made as each writer session
/// is set up, called for each batch, and what its failures mean.
extension PostgresLog {
    /// Waits for the answer of a `CALL` of the session's append procedure (`EventRows.appendProcedure`),
    /// which commits before it answers. An error is a refusal (nothing committed) as any
    /// statement's is, but for a cancel (`statement_timeout`, 57014): one that came after the
    /// procedure's `COMMIT` leaves the rows committed, so its outcome is unknown. A session that
    /// lost its procedure (`DISCARD TEMP`, dropped by hand: 42883) is closed, so that the next
    /// append connects again, and makes it again.
    static func committedByProcedure(_ call: EventLoopFuture<[PostgresRow]>, on connection: PostgresConnection, upTo timeout: Duration) throws -> [PostgresRow] {
        do {
            return try wait(for: call, upTo: timeout, closing: connection)
        } catch where sqlState(of: error) == "57014" {
            throw PostgresLogFailure("\(describe(error)) (the append was cancelled, perhaps after it committed)")
        } catch where sqlState(of: error) == "42883" {
            closeSoon(connection)
            throw PostgresLogFailure("the writer's session lost its append procedure (\(describe(error))); nothing was appended, and the next write connects again", isRefusal: true)
        }
    }

    /// The statement that creates the append procedure in a writer's new session (`EventRows.appendProcedure`).
    static func appendProcedure(_ settings: PostgresSettings) -> PostgresQuery {
        PostgresQuery(unsafeSQL: EventRows.appendProcedure(into: settings.table))
    }

    /// Whether a writer's new session has the append procedure, given how `appendProcedure`'s
    /// statement went on `connection`: not when the database refused it (most often a role
    /// without the `TEMPORARY` privilege on the database, 42501), logged as a warning at each
    /// session's setup: that session's appends then take a transaction of three statements. Any
    /// other failure is the session's setup failing.
    static func madeAppendProcedure(_ outcome: Result<Void, any Error>, on connection: PostgresConnection, _ settings: PostgresSettings, logger: Logger) throws -> Bool {
        do {
            try outcome.get()
            return true
        } catch where isRefusal(error, on: connection) {
            let remedy = sqlState(of: error) == "42501" ? "; grant the role TEMPORARY on the database" : ""
            logger.warning("cannot create the writer's temporary procedure: each append takes three statements (BEGIN, the insert, COMMIT), not one\(remedy)", metadata: ["log.path": "\(settings.description)", "error": "\(describe(error))"])
            return false
        }
    }
}
