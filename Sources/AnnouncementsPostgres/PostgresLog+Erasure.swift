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

    public func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        guard !replacements.isEmpty else { return }
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
        let writer = self.writer.withLock { $0 }
        do {
            guard !writer.isClosed else { throw PostgresLogFailure("the connection to PostgreSQL is closed") }
            let result = try Self.wait(for: writer.query(update, logger: logger), upTo: settings.commitTimeout, closing: writer)
            let count = try result.rows.first?.decode(Int64.self) ?? 0
            guard count == Int64(replacements.count) else {
                throw PostgresLogFailure("\(count) of the \(replacements.count) rows to erase were found where they were read: the table was changed meanwhile")
            }
            if isShared {
                // The other nodes drop what they kept of these lines.
                _ = try? Self.wait(for: writer.query("SELECT pg_notify(\(channel), \("erased " + node))", logger: logger), upTo: settings.commitTimeout, closing: writer)
            }
        } catch {
            throw LogError(.writeFailed, path: path, message: "cannot erase the rows: \(Self.describe(error)); the rows are as they were; the erased event is in the log (erasing again, or the next start of a server, overwrites them)")
        }
        do {
            let vacuum = PostgresQuery(unsafeSQL: "VACUUM FULL \(settings.table)")
            _ = try Self.wait(for: writer.query(vacuum, logger: logger), upTo: .seconds(600), closing: writer)
        } catch {
            logger.error("the rows are erased, but VACUUM FULL failed: the table's old row versions hold the erased texts until it runs; run it by hand", metadata: [
                "log.path": "\(path)", "error": "\(Self.describe(error))",
            ])
        }
    }
}
