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
    /// it inserted, how many notifications it sent, and whether its session holds the writer role.
    /// It inserts none unless the table ends there (its last row ends at `start`, or it is empty
    /// and `start` is 0), so that no process can leave a gap however it went wrong; nor unless its
    /// transaction can take the advisory lock `fence` (the writer role's), which it can only when
    /// no other session holds it: a holder whose session was ended, or that lost the role any
    /// other way, can append nothing more until it has taken the role again. (A session that holds
    /// the lock takes it again at once, even with others in line.) With `channel`, it notifies the
    /// processes listening there as it commits, with `payload`.
    func insert(into table: String, at start: Int64, fence: Int64, notifying channel: String? = nil, payload: String = "") -> PostgresQuery {
        let previous = (seqs.first ?? 1) - 1
        var query: PostgresQuery = """
            INSERT INTO \(unescaped: table) (seq, position, id, type, by, at, key, line)
            SELECT s, p, i, t, b, a, NULLIF(k, ''), l
            FROM unnest(\(seqs)::bigint[], \(positions)::bigint[], \(ids)::bigint[], \(types)::text[],
                        \(writers)::text[], \(times)::timestamptz[], \(keys)::text[], \(lines)::bytea[])
                 AS r(s, p, i, t, b, a, k, l)
            WHERE (SELECT held FROM fence)
              AND CASE WHEN \(start)::bigint = 0 THEN NOT EXISTS (SELECT 1 FROM \(unescaped: table))
                       ELSE EXISTS (SELECT 1 FROM \(unescaped: table) WHERE seq = \(previous) AND position + octet_length(line) + 1 = \(start)) END
            RETURNING 1
            """
        query.binds.append(fence)
        let fenced = "fence AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($\(query.binds.count)::bigint) AS held)"
        if let channel {
            // Notified only when rows went in (a data-modifying WITH runs whether or not it is read).
            query.binds.append(channel)
            query.binds.append(payload)
            query.sql = """
                WITH \(fenced),
                     appended AS (\(query.sql)),
                     notified AS (SELECT pg_notify($\(query.binds.count - 1), $\(query.binds.count)) FROM appended LIMIT 1)
                SELECT (SELECT count(*) FROM appended), (SELECT count(*) FROM notified), (SELECT held FROM fence)
                """
        } else {
            query.sql = "WITH \(fenced), appended AS (\(query.sql)) SELECT count(*), 0::bigint, (SELECT held FROM fence) FROM appended"
        }
        return query
    }
}
