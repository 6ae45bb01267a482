import PostgresNIO
import Synchronization

/// The statements a log runs at every append and every read of new lines, prepared once per
/// session: PostgreSQL then parses each once, not at every batch, and plans it once it has settled
/// on a generic plan (the insert's parse and plan cost about as much as its execution and commit
/// together, 0.3 ms each under pgbench: issue 38). A session's prepared statements end with it,
/// so each is kept with the connection it was prepared on, and prepared again on a new one.
///
/// postgres-nio 1.33's `PostgresPreparedStatement` needs its SQL to be known statically, and a
/// log's table is named in its settings: these go through `prepare(query:)`, whose rows carry
/// the row description PostgreSQL gave before their format was chosen (text) while they come in
/// binary (as every result postgres-nio asks for). Their statements answer only text, whose two
/// forms are the same bytes, and `bytea`, read as the bytes that come: the binary form, the
/// line's own bytes.
final class PreparedStatements: Sendable {
    private struct Entry: Sendable {
        let connection: PostgresConnection
        let sql: String
        let statement: PreparedQuery
    }

    private let entries = Mutex<[Entry]>([])

    /// `sql` prepared on `connection`: prepared now (one round trip, at most `timeout`) unless it
    /// was before. Two threads asking at once may both prepare it; each statement works.
    func statement(_ sql: String, on connection: PostgresConnection, upTo timeout: Duration) throws -> PreparedQuery {
        if let statement = prepared(sql, on: connection) { return statement }
        let statement = try PostgresLog.wait(for: connection.prepare(query: sql), upTo: timeout, closing: connection)
        keep(statement, sql: sql, on: connection)
        return statement
    }

    /// `sql` if it was prepared on `connection`, else nil (without preparing it).
    func prepared(_ sql: String, on connection: PostgresConnection) -> PreparedQuery? {
        entries.withLock { $0.first { $0.connection === connection && $0.sql == sql } }?.statement
    }

    /// Prepares `sql` on `connection` (a session being set up, before anyone else uses it).
    func prepare(_ sql: String, on connection: PostgresConnection) async throws {
        keep(try await connection.prepare(query: sql).get(), sql: sql, on: connection)
    }

    private func keep(_ statement: PreparedQuery, sql: String, on connection: PostgresConnection) {
        entries.withLock { entries in
            // Those of closed connections go: their sessions took the statements with them.
            entries.removeAll { $0.connection.isClosed }
            // Two threads that prepared it at once: the first one kept is the one found.
            guard !entries.contains(where: { $0.connection === connection && $0.sql == sql }) else { return }
            entries.append(Entry(connection: connection, sql: sql, statement: statement))
        }
    }
}
