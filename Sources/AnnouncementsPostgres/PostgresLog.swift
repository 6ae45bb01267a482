import AnnouncementsDomain
import AnnouncementsStore
import Dispatch
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The log in a PostgreSQL table (`storage: postgres`): another `EventLog`, for a log that outlives
/// one machine, with PostgreSQL's own replication and failover.
///
/// Each event is one row: `seq` (the primary key), `position` (where the line starts in the
/// same log as a file: rows exported in seq order are byte for byte the file), the announcement's
/// `id`, the `type`, the writer (`by`), the time (`at`), the idempotency `key`, and the `line`'s
/// exact bytes (the hash chain covers them, so `prev` and `verify` work unchanged).
///
/// **Order without gaps.** One process at a time holds the writer role: a session-level advisory
/// lock (`pg_try_advisory_lock`) taken by the writer's connection when the log opens and held
/// until it closes, or until its session dies with its process. The writer assigns each seq itself,
/// after the last durable one, and appends one batch at a time, each in one transaction on that
/// same connection: batch n+1 is sent only once batch n has committed, so commit order is seq
/// order and no reader can see seq n+1 before n. (A `bigserial` would not do: two transactions
/// take 1 and 2, 2 commits first, and a reader that saw 2 skips 1 forever.) Were two writers ever
/// to race (the lock taken by hand), the primary key refuses the second row for a seq.
///
/// **Durability.** Each batch is one `INSERT … SELECT FROM unnest(…)` in autocommit, with
/// `synchronous_commit = on` set on the writer's session: when it returns, the batch is committed
/// (group commit: the store hands over everything prepared while the last batch committed).
///
/// `appendDurably` and `read` are synchronous, as `EventLog` asks: they wait for the query's
/// future, answered on SwiftNIO's event loops (never on Swift's cooperative pool, which they may
/// be called from), so waiting cannot deadlock.
public final class PostgresLog: EventLog {
    public let path: String
    let settings: PostgresSettings
    /// The connection that holds the writer role and makes every append.
    let writer: PostgresConnection
    /// A connection for reading durable lines back, so that reads never queue behind an append;
    /// replaced by a new one when it is found closed (a server restart, an idle connection cut).
    private let reader: Mutex<PostgresConnection>
    let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var durableEnd: Int64
        var isUnusable = false
        var isClosed = false
    }

    init(settings: PostgresSettings, writer: PostgresConnection, reader: PostgresConnection, durableEnd: Int64, logger: Logger) {
        self.path = settings.description
        self.settings = settings
        self.writer = writer
        self.reader = Mutex(reader)
        self.logger = logger
        self.state = Mutex(State(durableEnd: durableEnd))
    }

    public var durableEnd: Int64 {
        state.withLock { $0.durableEnd }
    }

    public var isUnusable: Bool {
        state.withLock { $0.isUnusable }
    }

    public func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64 {
        try state.withLock { state throws(LogError) in
            guard !state.isClosed else { throw LogError(.unusable, path: path, message: "the log is closed") }
            guard !state.isUnusable else {
                throw LogError(.unusable, path: path, message: "an earlier append's outcome is unknown (the connection failed while it ran); restart to read the log as it is")
            }
            guard start == state.durableEnd else {
                throw LogError(.unusable, path: path, message: "an append was to go at position \(start), but the log's lines end at \(state.durableEnd)")
            }
        }
        let rows = try EventRows(lines: lines, start: start, path: path)
        do {
            guard !writer.isClosed else { throw PostgresLogFailure("the connection to PostgreSQL is closed") }
            _ = try Self.wait(for: writer.query(rows.insert(into: settings.table), logger: logger), upTo: settings.commitTimeout, closing: writer)
        } catch {
            // A refusal by the server rolled the transaction back: nothing was appended. Any other
            // failure (the connection lost while the commit was under way) leaves the outcome unknown.
            // (A FATAL or PANIC error ends the session: the commit may have happened before it.)
            let psql = error as? PSQLError
            let isRefusal = psql?.code == .server && psql?.serverInfo?[.severity] == "ERROR" && !writer.isClosed
            state.withLock { $0.isUnusable = $0.isUnusable || !isRefusal }
            throw LogError(.writeFailed, path: path, message: "cannot append to the log: \(Self.describe(error))")
        }
        let end = start + Int64(lines.count)
        state.withLock { $0.durableEnd = end }
        return end
    }

    /// Every read is a round trip to the database.
    public var readsWait: Bool { true }

    public func read(from position: Int64, count: Int) throws(LogError) -> [UInt8] {
        let end = position + Int64(count)
        let query: PostgresQuery = "SELECT line FROM \(unescaped: settings.table) WHERE position >= \(position) AND position < \(end) ORDER BY position"
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        do {
            let reader = try readingConnection()
            let result = try Self.wait(for: reader.query(query, logger: logger), upTo: settings.commitTimeout, closing: reader)
            for row in result.rows {
                var line = try row.decode(ByteBuffer.self)
                bytes += line.readBytes(length: line.readableBytes) ?? []
                bytes.append(UInt8(ascii: "\n"))
            }
        } catch {
            throw LogError(.unreadable, path: path, message: "cannot read the log: \(Self.describe(error))")
        }
        guard bytes.count == count else {
            throw LogError(.unreadable, path: path, message: "positions \(position)..<\(end) hold \(bytes.count) bytes, not \(count): the table was changed while the server runs; stop it and run `announcements verify`")
        }
        return bytes
    }

    /// Deletes every row, as the writer: undoes an `import` that failed half way into a table
    /// that was empty.
    public func removeAll() throws(LogError) {
        do {
            _ = try Self.wait(for: writer.query("DELETE FROM \(unescaped: settings.table)", logger: logger), upTo: settings.commitTimeout, closing: writer)
        } catch {
            throw LogError(.writeFailed, path: path, message: "cannot empty the table: \(Self.describe(error))")
        }
        state.withLock { $0.durableEnd = 0 }
    }

    public func close() {
        let wasClosed = state.withLock { state in
            defer { state.isClosed = true }
            return state.isClosed
        }
        guard !wasClosed else { return }
        // Closing the session releases its advisory lock; unlock first all the same, so that a
        // connection slow to close does not hold the writer role meanwhile.
        // (Each step waits a bounded time: a session the server already dropped may never answer.)
        if !writer.isClosed {
            let unlock = writer.query("SELECT pg_advisory_unlock(\(PostgresLog.lockKey(settings.table)))", logger: logger)
            _ = try? Self.wait(for: unlock, upTo: settings.commitTimeout, closing: writer)
        }
        for connection in [writer, reader.withLock { $0 }] where !connection.isClosed {
            _ = try? Self.wait(for: connection.close(), upTo: .seconds(5), closing: connection)
        }
    }

    /// The reader's connection, connected again when it was closed.
    private func readingConnection() throws -> PostgresConnection {
        let current = reader.withLock { $0 }
        guard current.isClosed else { return current }
        let configuration = try Self.configuration(settings)
        let connecting = PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration, id: 2, logger: logger
        )
        let fresh = try Self.wait(for: connecting, upTo: settings.commitTimeout, closing: nil)
        logger.info("connected the log's reader to PostgreSQL again", metadata: ["log.path": "\(path)"])
        let replaced = reader.withLock { reader in
            defer { reader = fresh }
            return reader
        }
        replaced.close().whenComplete { _ in }
        return fresh
    }

    /// Waits for `future` (answered on SwiftNIO's event loops) at most `timeout`; then closes
    /// `connection`, whose query's outcome is unknown (a dead server or network, which a session
    /// does not always notice), and fails.
    static func wait<T: Sendable>(for future: EventLoopFuture<T>, upTo timeout: Duration, closing connection: PostgresConnection?) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<T, any Error>?>(nil)
        future.whenComplete { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard done.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success, let result = outcome.withLock({ $0 }) else {
            connection?.close().whenComplete { _ in }
            throw PostgresLogFailure("PostgreSQL did not answer within \(timeout) (the connection is closed; the query's outcome is unknown)")
        }
        return try result.get()
    }

    /// The advisory lock key of the writer role on `table`: the same in every process.
    static func lockKey(_ table: String) -> Int64 {
        // FNV-1a of "announcements:" + the table's name.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("announcements:" + table).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// An error from postgres-nio in words (its own description hides everything, by design).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresLogFailure { return error.message }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            return "PostgreSQL: \(message)" + (info[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
    }
}

/// A failure of the PostgreSQL log's own (not postgres-nio's).
struct PostgresLogFailure: Error {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}
