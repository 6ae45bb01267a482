import AnnouncementsDomain
import AnnouncementsStore
import NIOCore
import PostgresNIO

/// Erasure in the table: the rows overwritten by their sealed forms in one `UPDATE` (atomic: no
/// journal needed), then `VACUUM FULL` of the table, which rewrites it without the old row
/// versions (it locks the table while it runs: other nodes' reads wait for it). PostgreSQL's own
/// write-ahead log and backups keep the old versions until they are recycled; README.md says so.
extension PostgresLog {
    public var erasesInPlace: Bool { true }

    /// Overwrites the rows, then finishes: tells the other nodes and runs `VACUUM FULL`. Finishes
    /// also when no row is left to overwrite: an earlier attempt may have overwritten them and
    /// failed before it finished.
    public func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        let writer = self.writer.withLock { $0 }
        if !replacements.isEmpty { try overwrite(replacements, on: writer) }
        if isShared {
            // The other nodes drop what they kept of these lines.
            _ = try? Self.wait(for: writer.query("SELECT pg_notify(\(channel), \("erased " + node))", logger: logger), upTo: settings.commitTimeout, closing: writer)
        }
        do {
            let vacuum = PostgresQuery(unsafeSQL: "VACUUM FULL \(settings.table)")
            _ = try Self.wait(for: writer.query(vacuum, logger: logger), upTo: .seconds(600), closing: writer)
        } catch {
            logger.error("the rows are erased, but VACUUM FULL failed: the table's old row versions hold the erased texts until it runs; erase the announcement again, or run it by hand", metadata: [
                "log.path": "\(path)", "error": "\(Self.describe(error))",
            ])
        }
    }

    /// Overwrites the rows at the replacements' positions in one `UPDATE`, on `writer`.
    private func overwrite(_ replacements: [LineReplacement], on writer: PostgresConnection) throws(LogError) {
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
        let after = "the erased event is in the log (erasing again, or the next start of a server, finishes the erasure)"
        guard !writer.isClosed else {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: the connection to PostgreSQL is closed; the rows are as they were; \(after)")
        }
        let count: Int64
        do {
            let result = try Self.wait(for: writer.query(update, logger: logger), upTo: settings.commitTimeout, closing: writer)
            count = try result.rows.first?.decode(Int64.self) ?? 0
        } catch {
            // A refusal by the server rolled the UPDATE back; any other failure (no answer in
            // time, the connection lost) leaves it unknown whether it committed.
            let psql = error as? PSQLError
            let isRefusal = psql?.code == .server && psql?.serverInfo?[.severity] == "ERROR" && !writer.isClosed
            let outcome = isRefusal ? "the rows are as they were" : "whether the rows were overwritten is unknown"
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: \(Self.describe(error)); \(outcome); \(after)")
        }
        guard count == Int64(replacements.count) else {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: only \(count) of the \(replacements.count) were where they were read (those are overwritten): the table was changed meanwhile; stop the servers and run `announcements verify`")
        }
    }
}
