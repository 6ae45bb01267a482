import AnnouncementsDomain
import Foundation
import AnnouncementsStore
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

extension PostgresLog {
    /// Connects, creates the table when it is missing, and replays the log into the state a store
    /// starts from (indexed, as `EventStore.open(log:replay:)` wants it).
    ///
    /// The log is shared (as `serve` opens it): the writer role moves between the processes that
    /// write (see `PostgresLog`). With `alone`, this process takes the role at once and keeps it
    /// until it closes, for work no other writer may interleave with (`import`, benchmarks); it
    /// then fails at once, with `LogError.Kind.locked`, while another process holds the role.
    /// The replay follows the hash chain as `chainCheck` says (a start-up refuses a broken one).
    public static func open(_ settings: PostgresSettings, alone: Bool = false, chainCheck: ChainCheck = .refuse, logger: Logger) async throws(LogError) -> (log: PostgresLog, replay: Replay) {
        let path = settings.description
        // A writer alone is named apart: no node ends its session as a stalled holder's.
        let writer = try await connect(settings, id: alone ? 6 : 1, logger: logger)
        do throws(LogError) {
            if alone {
                let key = lockKey(settings.table)
                let locked = try await run(path, "take the writer role") {
                    let rows: PostgresRowSequence = try await writer.query("SELECT pg_try_advisory_lock(\(key))", logger: logger)
                    for try await locked in rows.decode(Bool.self) { return locked }
                    return false
                }
                guard locked else {
                    throw LogError(.locked, path: path, message: "another process holds the writer role on this log (PostgreSQL advisory lock \(key)); stop it, or use another table")
                }
            }
            let writerPID: Int32 = try await run(path, "set up the writer's session") {
                for query in writerSession(settings) { try await writer.query(query, logger: logger) }
                for try await pid in try await writer.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) { return pid }
                return 0
            }
            try await createTable(settings.table, on: writer, path: path, logger: logger)
            let statements = PreparedStatements()
            try await run(path, "prepare the writer's statements") {
                let created: Result<Void, any Error>
                do {
                    try await writer.query(appendProcedure(settings), logger: logger)
                    created = .success(())
                } catch {
                    created = .failure(error)
                }
                let procedure = try madeAppendProcedure(created, on: writer, settings, logger: logger)
                for sql in writerStatements(settings, procedure: procedure) { try await statements.prepare(sql, on: writer) }
            }
            var replay = Replay()
            replay.chainCheck = chainCheck
            var lastLine: [UInt8]?
            let end = try await lines(of: settings, on: writer, computesHashes: chainCheck != .off, logger: logger) { line throws(LogError) in
                try replayStep(&line, into: &replay, lastLine: &lastLine, until: nil, indexing: true, path: path)
            }
            if let lastLine { replay.end(withLastLineHash: LineHash(link: lastLine)) }
            let reader = try await connect(settings, id: 2, logger: logger)
            return (PostgresLog(settings: settings, writer: writer, writerPID: writerPID, statements: statements, reader: reader, durableEnd: end, isShared: !alone, logger: logger), replay)
        } catch {
            try? await writer.close()
            throw error
        }
    }

    /// Delivers the lines of the log in `table` in seq order until `body` stops, without taking the
    /// writer role (for `replay`, `verify` and `export`, which may run beside a server). Returns
    /// the number of lines delivered. A table that does not exist is an error naming it.
    public static func readLines(
        _ settings: PostgresSettings,
        computesHashes: Bool = false,
        logger: Logger,
        _ body: (inout LogLine) throws(LogError) -> LogReader.Next
    ) async throws(LogError) -> Int {
        let path = settings.description
        let connection = try await connect(settings, id: 3, logger: logger)
        var count = 0
        do throws(LogError) {
            guard try await exist([settings.table], on: connection, path: path, logger: logger) else {
                throw LogError(.unreadable, path: path, message: "no table \(settings.table) in the database: a server (or `announcements init` or `import`) creates it")
            }
            _ = try await lines(of: settings, on: connection, computesHashes: computesHashes, logger: logger) { line throws(LogError) in
                count += 1
                return try body(&line)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
        return count
    }

    /// Streams the rows of the log's table in seq order as lines: numbered by seq, at their
    /// positions, each checked to follow the one before it (the next seq, at the next position).
    /// Reads in pages of `settings.pageRows` rows, each a statement of its own (one statement
    /// for a whole large table would outlive the statement timeout), all in one read-only
    /// `REPEATABLE READ` transaction: the lines as they were when it began (an erasure's `UPDATE`
    /// between two pages is not half seen). Returns where the last line ends (0 for an empty log).
    static func lines(
        of settings: PostgresSettings,
        on connection: PostgresConnection,
        computesHashes: Bool = false,
        logger: Logger,
        _ body: (inout LogLine) throws(LogError) -> LogReader.Next
    ) async throws(LogError) -> Int64 {
        let path = settings.description
        try await run(path, "read the log") {
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        }
        let end: Int64
        do throws(LogError) {
            end = try await pages(of: settings, on: connection, computesHashes: computesHashes, logger: logger, body)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
        try await run(path, "read the log") { try await connection.query("COMMIT", logger: logger) }
        return end
    }

    /// The pages of `lines(of:on:computesHashes:logger:_:)`, in the transaction it opened.
    private static func pages(
        of settings: PostgresSettings,
        on connection: PostgresConnection,
        computesHashes: Bool,
        logger: Logger,
        _ body: (inout LogLine) throws(LogError) -> LogReader.Next
    ) async throws(LogError) -> Int64 {
        let path = settings.description
        var expected: (seq: Int64, position: Int64) = (1, 0)
        let pageRows = max(1, settings.pageRows)
        var pageIsFull = true
        while pageIsFull {
            let rows: PostgresRowSequence = try await run(path, "read the log") {
                try await connection.query("""
                    SELECT seq, position, line FROM \(unescaped: settings.table)
                    WHERE seq >= \(expected.seq) ORDER BY seq LIMIT \(pageRows)
                    """, logger: logger)
            }
            var count = 0
            do {
                for try await (seq, position, buffer) in rows.decode((Int64, Int64, ByteBuffer).self) {
                    count += 1
                    guard seq == expected.seq else {
                        throw LogError(.invalidLine, path: path, line: Int(seq), message: "the log goes from seq \(expected.seq - 1) to seq \(seq): rows are missing")
                    }
                    guard position == expected.position else {
                        throw LogError(.invalidLine, path: path, line: Int(seq), message: "the row's position is \(position), but the lines before it end at \(expected.position)")
                    }
                    let bytes = Array(buffer.readableBytesView)
                    guard !bytes.contains(UInt8(ascii: "\n")) else {
                        throw LogError(.invalidLine, path: path, line: Int(seq), message: "the row's line holds a newline")
                    }
                    let parsed = Result { () throws(LineProblem) -> Event in
                        let event = try EventParser.parse(bytes)
                        guard event.seq == Int(seq) else { throw LineProblem("the line's seq is \(event.seq), but its row's is \(seq)") }
                        return event
                    }
                    var line = LogLine(
                        number: Int(seq), offset: position, bytes: bytes[...], parsed: parsed,
                        hash: computesHashes ? LineHash(link: bytes) : nil, isLast: false
                    )
                    expected = (seq + 1, position + Int64(bytes.count) + 1)
                    if case .stop = try body(&line) { return expected.position }
                }
            } catch let error as LogError {
                throw error
            } catch {
                throw LogError(.unreadable, path: path, message: "cannot read the log: \(describe(error))")
            }
            pageIsFull = count == pageRows
        }
        return expected.position
    }

    /// Whether the tables (or indexes) named `relations` all exist, as the connection's
    /// `search_path` finds them.
    static func exist(_ relations: [String], on connection: PostgresConnection, path: String, logger: Logger) async throws(LogError) -> Bool {
        try await run(path, "look for the events table") {
            let rows: PostgresRowSequence = try await connection.query("SELECT bool_and(to_regclass(r) IS NOT NULL) FROM unnest(\(relations)::text[]) AS r", logger: logger)
            for try await exist in rows.decode(Bool.self) { return exist }
            return false
        }
    }

    /// Creates the events table and its index when they are missing, under an advisory lock of its
    /// own (two nodes starting at once would otherwise race to create them). Looks first: even
    /// `CREATE INDEX IF NOT EXISTS` waits for a lock on the table, which an import's transaction
    /// holds until it commits.
    static func createTable(_ table: String, on connection: PostgresConnection, path: String, logger: Logger) async throws(LogError) {
        guard try await !exist([table, table + "_id"], on: connection, path: path, logger: logger) else { return }
        let key = lockKey(table, for: "schema")
        try await run(path, "create the events table") {
            try await connection.query("SELECT pg_advisory_lock(\(key))", logger: logger)
            defer { connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger).whenComplete { _ in } }
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS \(unescaped: table) (
                    seq bigint PRIMARY KEY CHECK (seq >= 1),
                    position bigint NOT NULL UNIQUE CHECK (position >= 0),
                    id bigint NOT NULL,
                    type text NOT NULL,
                    by text NOT NULL,
                    at timestamptz NOT NULL,
                    key text,
                    line bytea NOT NULL
                )
                """, logger: logger)
            try await connection.query("CREATE INDEX IF NOT EXISTS \(unescaped: table)_id ON \(unescaped: table) (id, seq)", logger: logger)
        }
    }

    static func connect(_ settings: PostgresSettings, id: Int, logger: Logger) async throws(LogError) -> PostgresConnection {
        let path = settings.description
        do throws(PostgresSettingsError) {
            // The table's name goes into SQL as it is: settings made in code are checked here too.
            try PostgresSettings.check(table: settings.table)
        } catch {
            throw LogError(.unreadable, path: path, message: error.message)
        }
        let configuration = try self.configuration(settings, connection: id)
        do {
            return try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger)
        } catch {
            throw LogError(.unavailable, path: path, message: "cannot connect to PostgreSQL: \(describe(error))")
        }
    }

    /// How postgres-nio reaches the database of `settings`, for the connection numbered `id`
    /// (1 the writer, 2 the reader, 4 the listener, 5 an erasure's, 6 the writer of a log opened
    /// alone, others a tool's): each connection says in its
    /// `application_name` what it is and which process (and machine) it belongs to, so that
    /// `pg_stat_activity` shows, beside `pg_locks`, which node holds the writer role.
    static func configuration(_ settings: PostgresSettings, connection id: Int) throws(LogError) -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch settings.tls {
            case .disable: tls = .disable
            case .prefer, .require:
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: configuration)
                tls = settings.tls == .prefer ? .prefer(context) : .require(context)
            case .verifyFull: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw LogError(.unreadable, path: settings.description, message: "cannot set up TLS: \(error)")
        }
        var configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.user,
            password: settings.password, database: settings.database, tls: tls
        )
        let role = [1: "writer", 2: "reader", 4: "listener", 5: "eraser", 6: "sole writer"][id] ?? "tool"
        configuration.options.additionalStartupParameters = [
            ("application_name", "announcements \(role) node=\(processTag) pid=\(getpid()) host=\(ProcessInfo.processInfo.hostName)")
        ]
        return configuration
    }

    /// Runs `work`, turning any failure into a `LogError` that says what was being done.
    @discardableResult
    static func run<T>(_ path: String, _ what: String, _ work: () async throws -> T) async throws(LogError) -> T {
        do {
            return try await work()
        } catch let error as LogError {
            throw error
        } catch {
            throw LogError(.unreadable, path: path, message: "cannot \(what): \(describe(error))")
        }
    }
}

extension PostgresLog {
    /// Rebuilds the state from the log in PostgreSQL, up to `bound` when given, without taking the
    /// writer role (as `LogReader.replay` does for a file). Stops at the first bad line.
    public static func replay(_ settings: PostgresSettings, until bound: ReplayBound? = nil, logger: Logger) async throws(LogError) -> Replay {
        let path = settings.description
        var replay = Replay()
        var lastLine: [UInt8]?
        _ = try await readLines(settings, logger: logger) { line throws(LogError) in
            try replayStep(&line, into: &replay, lastLine: &lastLine, until: bound, indexing: false, path: path)
        }
        if let lastLine { replay.end(withLastLineHash: LineHash(link: lastLine)) }
        return replay
    }

    /// One line of a replay from the table: its event applied to `replay` (stopping past `bound`),
    /// its bytes kept as the last line (hashed once at the end). A line that is not an event stops
    /// the replay with an error naming it.
    private static func replayStep(
        _ line: inout LogLine,
        into replay: inout Replay,
        lastLine: inout [UInt8]?,
        until bound: ReplayBound?,
        indexing: Bool,
        path: String
    ) throws(LogError) -> LogReader.Next {
        switch line.takeParsed() {
        case .success(let event):
            if let bound, !bound.includes(event) { return .stop }
            try replay.apply(event, line: line.number, offset: line.offset, count: line.bytes.count, link: line.hash, indexing: indexing, path: path)
        case .failure(let problem):
            throw LogError(.invalidLine, path: path, line: line.number, message: problem.message)
        }
        lastLine = Array(line.bytes)
        return .continue
    }
}
