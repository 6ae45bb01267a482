import AnnouncementsDomain
import AnnouncementsStore
import NIOCore
import PostgresNIO

/// Erasure in the table: the rows overwritten by their sealed forms in one `UPDATE` (atomic: no
/// journal needed), then `VACUUM FULL` of the table, which rewrites it without the old row
/// versions (it locks the table while it runs: other nodes' reads wait for it). PostgreSQL's own
/// write-ahead log and backups keep the old versions until they are recycled; docs/security.md says so.
extension PostgresLog {
    public var erasesInPlace: Bool { true }

    /// Overwrites the rows, then finishes: tells the other nodes and runs `VACUUM FULL`. Finishes
    /// also when no row is left to overwrite: an earlier attempt may have overwritten them and
    /// failed before it finished. Runs on a connection of its own, made for it: not the writer's,
    /// whose session holds the writer role and whose statement timeout would cut `VACUUM FULL`
    /// short, nor the reader's, whose other queries give up on their waits behind the table's lock
    /// (and close it) long before `VACUUM FULL` of a large table ends.
    public func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        let connection: PostgresConnection
        do {
            connection = try Self.connection(settings, id: 5, logger: logger)
        } catch {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: cannot connect to PostgreSQL (\(Self.describe(error))); the rows are as they were; \(Self.erasedEventStays)")
        }
        defer { Self.closeSoon(connection) }
        do {
            // As the writer's appends: the overwrite is durable before the erasure is answered.
            _ = try Self.wait(for: connection.query("SET synchronous_commit TO on", logger: logger), upTo: settings.commitTimeout, closing: connection)
        } catch {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: \(Self.describe(error)); the rows are as they were; \(Self.erasedEventStays)")
        }
        if !replacements.isEmpty { try overwrite(replacements, on: connection) }
        if isShared {
            // The other nodes drop what they kept of these lines (and look for themselves, in case
            // they miss this).
            _ = try? Self.wait(for: connection.query("SELECT pg_notify(\(channel), \("erased " + node))", logger: logger), upTo: settings.commitTimeout, closing: connection)
        }
        do {
            // Its exclusive lock is waited for at most a few seconds: queued behind a long reader
            // (an export, a node's start-up), it would hold up every node's reads and writes behind
            // it. Not had, the erasure is a 503 to repeat.
            _ = try Self.wait(for: connection.query("SET lock_timeout TO '5s'", logger: logger), upTo: settings.commitTimeout, closing: connection)
            let vacuum = PostgresQuery(unsafeSQL: "VACUUM FULL \(settings.table)")
            _ = try Self.wait(for: connection.query(vacuum, logger: logger), upTo: .seconds(600), closing: connection)
        } catch {
            throw LogError(.copiesLeft, path: path, message: "VACUUM FULL of the table failed (\(Self.describe(error))): its old row versions hold the erased texts until it runs; erase the announcement again, or run `VACUUM FULL \(settings.table)` by hand")
        }
    }

    /// What an erasure that failed leaves, and how it is finished.
    private static let erasedEventStays = "the erased event is in the log (erasing again, or the next start of a server, finishes the erasure)"

    /// Overwrites the rows at the replacements' positions in one `UPDATE`, on `connection`.
    private func overwrite(_ replacements: [LineReplacement], on connection: PostgresConnection) throws(LogError) {
        let positions = replacements.map(\.position)
        let lines = replacements.map { ByteBuffer(bytes: $0.bytes) }
        let update: PostgresQuery = """
            WITH sealed AS (
                UPDATE \(unescaped: settings.table) AS t SET line = r.l
                FROM unnest(\(positions)::bigint[], \(lines)::bytea[]) AS r(p, l)
                WHERE t.position = r.p AND octet_length(t.line) = octet_length(r.l)
                RETURNING 1)
            SELECT count(*) FROM sealed
            """
        let count: Int64
        do {
            let result = try committed(on: connection) { connection.query(update, logger: logger) }
            count = try result.rows.first?.decode(Int64.self) ?? 0
        } catch {
            // A refusal by the server rolled the UPDATE back; any other failure (no answer in
            // time, the connection lost) leaves it unknown whether it committed.
            let outcome = Self.isRefusal(error, on: connection) ? "the rows are as they were" : "whether the rows were overwritten is unknown"
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: \(Self.describe(error)); \(outcome); \(Self.erasedEventStays)")
        }
        guard count == Int64(replacements.count) else {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: only \(count) of the \(replacements.count) were where they were read (those are overwritten): the table was changed meanwhile; stop the servers and run `announcements verify`")
        }
    }
}
