import AnnouncementsDomain
import NIOCore
import PostgresNIO

/// A batch of lines as the columns of their rows, for one `INSERT … SELECT FROM unnest(…)`.
struct EventRows {
    var seqs: [Int64] = []
    var positions: [Int64] = []
    var ids: [Int64] = []
    var types: [String] = []
    var writers: [String] = []
    var times: [String] = []
    /// The idempotency keys; "" for none (stored as NULL).
    var keys: [String] = []
    var lines: [ByteBuffer] = []

    /// The rows of `lines` (whole lines, each ending with a newline), the first at `start`.
    init(lines bytes: UnsafeRawBufferPointer, start: Int64, path: String) throws(LogError) {
        var lineStart = 0
        while lineStart < bytes.count {
            guard let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw LogError(.writeFailed, path: path, message: "an append must be whole lines, each ending with a newline")
            }
            let line = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<newline])
            let event: Event
            do throws(LineProblem) {
                event = try EventParser.parse(line)
            } catch {
                throw LogError(.writeFailed, path: path, message: "an appended line is not an event: \(error.message)")
            }
            seqs.append(Int64(event.seq))
            positions.append(start + Int64(lineStart))
            ids.append(Int64(event.id))
            types.append(event.type.rawValue)
            writers.append(event.by)
            times.append(event.at.description)
            keys.append(event.key ?? "")
            lines.append(ByteBuffer(bytes: line))
            lineStart = newline + 1
        }
    }

    /// The statement that inserts the rows, whose first line goes at `start`, and answers how many
    /// it inserted: none unless the table ends there (its last row ends at `start`, or it is empty
    /// and `start` is 0), so that no process can leave a gap however it went wrong. With `channel`,
    /// it notifies the processes listening there as it commits, with `payload`.
    func insert(into table: String, at start: Int64, notifying channel: String? = nil, payload: String = "") -> PostgresQuery {
        let previous = (seqs.first ?? 1) - 1
        var query: PostgresQuery = """
            INSERT INTO \(unescaped: table) (seq, position, id, type, by, at, key, line)
            SELECT s, p, i, t, b, a, NULLIF(k, ''), l
            FROM unnest(\(seqs)::bigint[], \(positions)::bigint[], \(ids)::bigint[], \(types)::text[],
                        \(writers)::text[], \(times)::timestamptz[], \(keys)::text[], \(lines)::bytea[])
                 AS r(s, p, i, t, b, a, k, l)
            WHERE CASE WHEN \(start)::bigint = 0 THEN NOT EXISTS (SELECT 1 FROM \(unescaped: table))
                       ELSE EXISTS (SELECT 1 FROM \(unescaped: table) WHERE seq = \(previous) AND position + octet_length(line) + 1 = \(start)) END
            RETURNING 1
            """
        if let channel {
            // Notified only when rows went in (a data-modifying WITH runs whether or not it is read).
            query.binds.append(channel)
            query.binds.append(payload)
            query.sql = """
                WITH appended AS (\(query.sql)),
                     notified AS (SELECT pg_notify($\(query.binds.count - 1), $\(query.binds.count)) FROM appended LIMIT 1)
                SELECT (SELECT count(*) FROM appended), (SELECT count(*) FROM notified)
                """
        } else {
            query.sql = "WITH appended AS (\(query.sql)) SELECT count(*), 0::bigint FROM appended"
        }
        return query
    }
}
