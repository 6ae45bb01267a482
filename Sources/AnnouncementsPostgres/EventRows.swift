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

    /// The statement that inserts a batch of rows into `table` (prepared once per writer session:
    /// PostgreSQL then parses it once, not at every append, and plans it once it has settled on
    /// a generic plan) and answers how many it
    /// inserted, how many notifications it sent, and whether its session holds the writer role.
    /// Its parameters are `binds(at:fence:notifying:payload:)`. It inserts none unless the table
    /// ends where the batch starts (its last row ends there, or it is empty and the batch starts at
    /// 0), so that no process can leave a gap however it went wrong; nor unless its transaction
    /// can take the advisory lock `fence` (the writer role's), which it can only when no other
    /// session holds it: a holder whose session was ended, or that lost the role any other way,
    /// can append nothing more until it has taken the role again. (A session that holds the lock
    /// takes it again at once, even with others in line.) With a channel, it notifies the
    /// processes listening there as it commits (only when rows went in: a data-modifying `WITH`
    /// runs whether or not it is read). Every parameter's type is spelled out: a statement prepared
    /// without them takes each from its context. The answers are text (`answer(of:)` reads them;
    /// see `PreparedStatements`).
    static func insertStatement(into table: String) -> String {
        """
        WITH fence AS MATERIALIZED (SELECT pg_try_advisory_xact_lock($1::bigint) AS held),
             appended AS (
                 INSERT INTO \(table) (seq, position, id, type, by, at, key, line)
                 SELECT s, p, i, t, b, a::timestamptz, NULLIF(k, ''), l
                 FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[])
                      AS r(s, p, i, t, b, a, k, l)
                 WHERE (SELECT held FROM fence)
                   AND CASE WHEN $10::bigint = 0 THEN NOT EXISTS (SELECT 1 FROM \(table))
                            ELSE EXISTS (SELECT 1 FROM \(table) WHERE seq = $11::bigint AND position + octet_length(line) + 1 = $10::bigint) END
                 RETURNING 1),
             notified AS (SELECT pg_notify($12::text, $13::text) FROM appended WHERE $12::text <> '' LIMIT 1)
        SELECT (SELECT count(*) FROM appended)::text, (SELECT count(*) FROM notified)::text, (SELECT held FROM fence)::text
        """
    }

    /// The writer session's own procedure (in `pg_temp`: seen by that session only, gone with it,
    /// made again by each new one) that runs `insertStatement` and commits, answering what it
    /// answered: one statement and one round trip for a durable append, where a transaction of
    /// its own takes three (`BEGIN`, the insert, `COMMIT`, postgres-nio sending each once the one
    /// before is answered). A procedure's `COMMIT` commits before its `CALL` is answered (an
    /// autocommitted statement is answered before it commits: see `PostgresLog.committed`).
    /// Nothing follows the `COMMIT` but the answer; what can still fail there is an interrupt the
    /// commit held off: a cancel (`statement_timeout`, 57014), which `PostgresLog.committedByProcedure`
    /// takes for an unknown outcome, or, in a window of microseconds after a lock wait of 0.7 of
    /// the commit timeout at commit (the `NOTIFY` queue's), its `lock_timeout`, still taken for a
    /// refusal (see `PostgresLog.writerSession`). Its parameters are the
    /// insert's (`$1` to `$13` in its body as in the statement), then the three answers, which
    /// `appendCall` leaves out.
    static func appendProcedure(into table: String) -> String {
        """
        CREATE OR REPLACE PROCEDURE pg_temp.\(procedure)(
            bigint, bigint[], bigint[], bigint[], text[], text[], text[], text[], bytea[], bigint, bigint, text, text,
            INOUT appended_rows text DEFAULT NULL, INOUT notices text DEFAULT NULL, INOUT role_held text DEFAULT NULL
        ) LANGUAGE plpgsql AS $append$
        BEGIN
            \(insertStatement(into: table)) INTO appended_rows, notices, role_held;
            COMMIT;
        END
        $append$
        """
    }

    /// The call of `appendProcedure`, with the insert's parameters (`binds(at:fence:notifying:payload:)`).
    static let appendCall = "CALL pg_temp.\(procedure)($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"

    private static let procedure = "announcements_append"

    /// What `insertStatement` answered: how many rows it inserted, how many notifications it sent,
    /// and whether its session holds the writer role.
    static func answer(of row: PostgresRow) throws -> (inserted: Int64, notified: Int64, fenced: Bool) {
        let (inserted, notified, fenced) = try row.decode((String, String, String).self)
        guard let inserted = Int64(inserted), let notified = Int64(notified), fenced == "true" || fenced == "false" else {
            throw PostgresLogFailure("the insert answered \([inserted, notified, fenced]), not two counts and whether its session holds the writer role")
        }
        return (inserted, notified, fenced == "true")
    }

    /// The parameters of `insertStatement` for these rows, the first at `start`: `fence` is the
    /// writer role's lock; `channel` ("" for none) the channel to notify, with `payload`.
    func binds(at start: Int64, fence: Int64, notifying channel: String, payload: String) -> [PostgresData] {
        func array(_ values: [Int64]) -> PostgresData { PostgresData(array: values.map { PostgresData(int64: $0) }, elementType: .int8) }
        func array(_ values: [String]) -> PostgresData { PostgresData(array: values.map { PostgresData(string: $0) }, elementType: .text) }
        return [
            PostgresData(int64: fence),
            array(seqs), array(positions), array(ids), array(types), array(writers), array(times), array(keys),
            PostgresData(array: lines.map { PostgresData(type: .bytea, value: $0) }, elementType: .bytea),
            PostgresData(int64: start), PostgresData(int64: (seqs.first ?? 1) - 1),
            PostgresData(string: channel), PostgresData(string: payload),
        ]
    }
}
