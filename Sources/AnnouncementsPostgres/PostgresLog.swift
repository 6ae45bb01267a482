import AnnouncementsDomain
import AnnouncementsStore
import Dispatch
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

import Foundation

/// The log in a PostgreSQL table (`storage: postgres`): another `EventLog`, for a log that outlives
/// one machine, with PostgreSQL's own replication and failover, and that several server processes
/// (nodes) share.
///
/// Each event is one row: `seq` (the primary key), `position` (where the line starts in the
/// same log as a file: rows exported in seq order are byte for byte the file), the announcement's
/// `id`, the `type`, the writer (`by`), the time (`at`), the idempotency `key`, and the `line`'s
/// exact bytes (the hash chain covers them, so `prev` and `verify` work unchanged).
///
/// **Order without gaps.** One process at a time holds the *writer role*: a session-level advisory
/// lock (`pg_advisory_lock`) on its writer connection. The holder takes in every line appended
/// before it got the lock, assigns each seq itself after the last durable one, and appends one
/// batch at a time, each in one transaction on that connection: batch n+1 is sent only once batch
/// n has committed, and the next holder reads both before it appends. So commit order is seq
/// order, and no reader can see seq n+1 before n. (A `bigserial` would not do: two transactions
/// take 1 and 2, 2 commits first, and a reader that saw 2 skips 1 forever.) Were two writers ever
/// to race (the lock taken by hand), the primary key refuses the second row for a seq.
///
/// **The role moves** (a shared log, as `serve` opens it): a node takes the role when it has a
/// write to make, keeps it while it has more, and gives it up when another node asks: the asker
/// sends a notification (`NOTIFY`) on the table's channel and waits in the lock's queue; the holder
/// hears it (or sees the waiter in `pg_locks` on its next look, four times a second) and unlocks
/// once its appends under way have committed. A node that dies takes its session, and so the lock,
/// with it. A node that stops making progress (stopped, frozen, cut off while the database still
/// sees its session) loses it too: a node that has waited in line `settings.stallLimit` ends the
/// holder's session when it has run no statement for as long (`endStalledHolder`). Every insert
/// takes the lock for its own transaction, and inserts nothing when another session holds it: a
/// process that lost the role appends nothing, whatever it believes (fencing by the database).
/// The store waits a bounded time in line, then leaves it (`leaveLine`). What this process knows
/// of the role, and what follows from it, is `WriterRole`, a value type; this class drives it.
/// `import` and the benchmarks open the log *alone* instead: they take the role at once, or
/// fail, and keep it until they close.
///
/// **Following.** Every batch notifies the channel as it commits; each node listens, and looks at
/// the table's end four times a second besides (a lost notification costs at most that much), and
/// takes in the lines the others appended (`lines(after:)`). A listener that no longer hears (a
/// half-open connection) is found by the node's own pings (`ListenerWatch`) and connects again.
///
/// **Durability.** Each batch is one `INSERT … SELECT FROM unnest(…)` in a transaction of its own,
/// with `synchronous_commit = on` set on the writer's session: one `CALL` of the session's own
/// procedure that inserts and commits (`EventRows.appendProcedure`), or, in a session that could
/// not make it, `BEGIN`, the insert and `COMMIT` (`committed`). Once either is answered, the batch
/// is durable (group commit: the store hands over everything prepared while the last batch
/// committed).
///
/// `appendDurably` and `read` are synchronous, as `EventLog` asks: they wait for the query's
/// future, answered on SwiftNIO's event loops (never on Swift's cooperative pool, which they may
/// be called from), so waiting cannot deadlock.
public final class PostgresLog: EventLog {
    public let path: String
    let settings: PostgresSettings
    /// Whether other processes append too: the role moves between them (see above).
    public let isShared: Bool
    /// The connection that holds the writer role and makes every append; replaced by a new one
    /// when it is lost (a shared log only: the next holder of the role reads what it committed).
    let writer: Mutex<PostgresConnection>
    /// A connection for reading durable lines back, so that reads never queue behind an append;
    /// replaced by a new one when it is found closed (a server restart, an idle connection cut).
    private let reader: Mutex<PostgresConnection>
    let logger: Logger
    let state: Mutex<State>
    /// The insert of a batch, the call of the append procedure and the read of a page, prepared on
    /// the connections they run on.
    let statements: PreparedStatements
    /// Their SQL (`EventRows.insertStatement`, `pageStatement(of:)`), made once: each append and
    /// each read looks its statement up by it.
    private let insertSQL: String
    private let pageSQL: String
    /// Held while the writer's connection is made again: by one thread at a time.
    private let connectingWriter = Mutex(())
    /// Wakes the follower from its wait between looks (the log closes).
    private let wake = DispatchSemaphore(value: 0)

    /// A request for the writer role on its way: the lock's statement, and the first page of the
    /// lines appended from `from` (where this process's lines ended when it asked), sent right
    /// behind it on the same session. The read runs once the lock is granted, so it sees every
    /// line the last holder committed: the role and what to take in come in one round trip.
    struct RoleRequest {
        var lock: EventLoopFuture<PostgresQueryResult>
        var firstPage: EventLoopFuture<[PostgresRow]>
    }

    struct State {
        var role: WriterRole<RoleRequest>
        var listener: Task<Void, Never>?
        /// The listener's connection while it listens, and whether it still hears (`ListenerWatch`).
        var listening: PostgresConnection?
        var watch: ListenerWatch
    }

    init(settings: PostgresSettings, writer: PostgresConnection, writerPID: Int32, statements: PreparedStatements, reader: PostgresConnection, durableEnd: Int64, isShared: Bool, logger: Logger) {
        self.statements = statements
        self.insertSQL = EventRows.insertStatement(into: settings.table)
        self.pageSQL = Self.pageStatement(of: settings.table)
        self.path = settings.description
        self.settings = settings
        self.isShared = isShared
        self.writer = Mutex(writer)
        self.reader = Mutex(reader)
        self.logger = logger
        let role = WriterRole<RoleRequest>(
            isShared: isShared, durableEnd: durableEnd, writerPID: writerPID,
            stallLimit: settings.stallLimit, lockTimeout: Self.lockTimeout(settings)
        )
        self.state = Mutex(State(role: role, watch: ListenerWatch(interval: settings.listenerCheck, stall: Self.lookStall, at: .now)))
    }

    public var durableEnd: Int64 {
        state.withLock { $0.role.durableEnd }
    }

    public var isUnusable: Bool {
        state.withLock { $0.role.isUnusable }
    }

    /// Whether this process holds the writer role now.
    public var holdsWriterRole: Bool {
        state.withLock { $0.role.holds }
    }

    public var writeBlock: LogError? {
        state.withLock { $0.role.writeBlock(at: .now) }.map { LogError(.locked, path: path, message: $0) }
    }

    public func writeCommittedByHolder() {
        state.withLock { $0.role.writeCommittedByHolder() }
    }

    /// Where writes through this process go instead: the address the last append of another
    /// process named (`appended ADDRESS NODE`), while this one does not hold the role.
    public var writeHolder: String? {
        guard !holdsWriterRole else { return nil }
        // Never this process's own address (another process on this machine's loopback, named
        // alike, would be this one).
        return addresses.withLock { $0.holder == $0.own ? nil : $0.holder }
    }

    public func advertise(_ address: String) {
        addresses.withLock { $0.own = address }
    }

    @discardableResult
    public func forgetWriteHolder(_ address: String) -> Bool {
        addresses.withLock { addresses in
            guard addresses.holder == address else { return false }
            addresses.holder = nil
            addresses.named = nil
            return true
        }
    }

    /// Where writes go: this process's advertised address; the address and process tag the last
    /// append's notice named; and that address once a look found the session holding the role
    /// to be that process's (its `application_name` names the tag).
    private struct Addresses {
        var own: String?
        var named: (address: String, tag: Substring)?
        var holder: String?
        /// The role's holder's `application_name` as the last look saw it (nil: nobody else).
        var holderName: String?

        /// A notice named `address` for the process tagged `tag`.
        mutating func heard(_ address: String?, tag: Substring) {
            named = address.map { ($0, tag) }
            confirm(holderName)
        }

        /// A look saw the role held by the session named `holderName` (nil: by nobody else). Only a
        /// session of this process's own database account has its name read: any account may take an
        /// advisory lock, notify, and name its session as it likes, and writes (with their clients'
        /// tokens) go to the address a confirmed holder's notice named.
        mutating func confirm(_ holderName: String?) {
            self.holderName = holderName
            guard let named, let holderName, holderName.contains("node=\(named.tag) ") else {
                holder = nil
                return
            }
            holder = named.address
        }
    }

    private let addresses = Mutex(Addresses())

    /// The payload of an append's notice: `appended ADDRESS NODE`, or `appended NODE` when this
    /// process advertises no address.
    private var appendedNotice: String {
        addresses.withLock { $0.own }.map { "appended \($0) \(node)" } ?? "appended " + node
    }

    /// The address an append's notice names (nil for `appended NODE`), and its sender's process
    /// tag (the first of its node name).
    static func address(inNotice payload: Substring) -> (address: String?, tag: Substring) {
        let words = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == "appended", !words[1].isEmpty else {
            return (nil, words.last?.prefix(8) ?? "")
        }
        return (String(words[1]), words[2].prefix(8))
    }

    /// The channel notifications about this log go on: the table's name.
    var channel: String { settings.table }
    /// This process's name in its notifications (`appended NODE`, `role NODE`), so that it does
    /// not wake for its own.
    let node = "\(PostgresLog.processTag)-\(UUID().uuidString)"

    /// This process's tag: in its sessions' `application_name` (`node=TAG`) and first in its
    /// notices' node name, so that a notice naming an address can be checked against the session
    /// that holds the writer role (any session may notify; only the holder holds the lock).
    static let processTag = String(UUID().uuidString.prefix(8)).lowercased()

    public func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64 {
        let inTransaction = try state.withLock { state throws(LogError) in try state.role.mayAppend(at: start, path: path) }
        let rows = try EventRows(lines: lines, start: start, path: path)
        let writer = self.writer.withLock { $0 }
        let inserted: Int64
        let fenced: Bool
        do {
            // Nothing sent: a refusal (a shared log connects again at its next write).
            guard !writer.isClosed else { throw PostgresLogFailure("the connection to PostgreSQL is closed", isRefusal: true) }
            let binds = rows.binds(at: start, fence: Self.lockKey(settings.table), notifying: isShared ? channel : "", payload: appendedNotice)
            let result: [PostgresRow]
            if !inTransaction, let call = statements.prepared(EventRows.appendCall, on: writer) {
                // The session's procedure inserts and commits: one round trip.
                result = try Self.committedByProcedure(call.execute(binds), on: writer, upTo: settings.commitTimeout)
            } else {
                let insert: PreparedQuery
                do {
                    insert = try statements.statement(insertSQL, on: writer, upTo: settings.commitTimeout)
                } catch {
                    // Nothing of the batch was sent: whatever stopped the statement's preparation
                    // (a refusal, a lost connection, no answer), nothing was appended.
                    throw PostgresLogFailure("cannot prepare the insert: \(Self.describe(error))", isRefusal: true)
                }
                // In an import's transaction, its COMMIT makes the rows durable; else one of its
                // own (a session without the procedure: see `madeAppendProcedure`).
                result = inTransaction
                    ? try Self.wait(for: insert.execute(binds), upTo: settings.commitTimeout, closing: writer)
                    : try committed(on: writer) { insert.execute(binds) }
            }
            guard let row = result.first else { throw PostgresLogFailure("the insert answered no row") }
            (inserted, _, fenced) = try EventRows.answer(of: row)
        } catch {
            // A refusal by the server rolled the transaction back: nothing was appended (a shared
            // log reads the table again before its next append: a duplicate seq means the table
            // holds lines this process has not seen). Any other failure (the connection lost while
            // the commit was under way) leaves the outcome unknown. (A FATAL or PANIC error ends
            // the session: the commit may have happened before it.) A shared log finds out when it
            // takes the role again: it reads what is there. A log alone cannot: it takes no more
            // appends.
            let refused = Self.isRefusal(error, on: writer)
            switch state.withLock({ $0.role.appendFailed(refused: refused) }) {
            case .yield: yieldWriterRole()
            case .dropWriter: Self.closeSoon(writer)
            case .none: break
            }
            let outcome = refused ? "" : " (whether it was committed is unknown: a retry with the same Idempotency-Key is made once)"
            throw LogError(.writeFailed, path: path, message: "cannot append to the log: \(Self.describe(error))\(outcome)")
        }
        guard fenced else {
            // Another session holds the lock: this process's session lost the role (ended as a
            // holder that made no progress, while this process was stopped or frozen).
            yieldWriterRole()
            throw LogError(.writeFailed, path: path, message: "another node holds the writer role: this node's session lost it (it made no progress while another waited, and was ended); nothing was appended; the next write takes the role again")
        }
        guard inserted == Int64(rows.seqs.count) else {
            // The insert's own check: the table does not end where this process's lines do.
            yieldWriterRole()
            throw LogError(.writeFailed, path: path, message: "the table does not end where this server's lines end (position \(start)): rows were removed, or another process appended without the writer role; nothing was appended. Stop the servers and run `announcements verify`")
        }
        let end = start + Int64(lines.count)
        state.withLock { $0.role.linesEnd(at: end) }
        return end
    }

    public func takeWriterRole(after end: Int64, waitingAtMost slice: Duration, writesSince: ContinuousClock.Instant, until deadline: ContinuousClock.Instant) throws(LogError) -> [UInt8]? {
        guard isShared else { return [] }
        let key = Self.lockKey(settings.table)
        do {
            let request: RoleRequest
            switch state.withLock({ $0.role.ask() }) {
            case .held:
                return []
            case .wait(let pending):
                request = pending
            case .send:
                let writer = try writingConnection(by: deadline)
                // Prepared with the writer's session (`writerStatements`): no round trip here,
                // and nothing sent yet should it fail.
                let page = try pageStatement(on: writer)
                // Ask the holder to give the role up, get in the lock's queue (the wait ends at
                // the session's lock_timeout, or when the store gives up: `leaveLine`), and read
                // what the holder appended once the role is this process's: sent together, run
                // one after another. (A notice that fails costs the holder's next look, a
                // quarter of a second; a failed connection fails the lock's request too.)
                writer.query("SELECT pg_notify(\(channel), \("role " + node))", logger: logger).whenFailure { [logger, path] error in
                    logger.debug("cannot ask for the writer role by notice", metadata: ["log.path": "\(path)", "error": "\(Self.describe(error))"])
                }
                request = RoleRequest(
                    lock: writer.query("SELECT pg_advisory_lock(\(key))", logger: logger),
                    firstPage: page.execute(Self.pageBinds(from: end, rows: settings.pageRows))
                )
                state.withLock { $0.role.asked(request, at: .now, writesSince: writesSince) }
            }
            do {
                _ = try Self.wait(for: request.lock, upTo: slice, closing: nil)
            } catch is PostgresLogFailure {
                // Still in line: the request stays queued.
                switch state.withLock({ $0.role.stillInLine(at: .now) }) {
                case .wait:
                    return nil
                case .lookForStall:
                    endStalledHolder()
                    return nil
                case .dropWriter:
                    // Not answered by the time the database should have ended the wait itself:
                    // the database or the network is gone without a word (no keepalive is sent
                    // while a request waits). The connection is given up, and the next write
                    // connects again. (The catch below marks it lost.)
                    Self.closeSoon(self.writer.withLock { $0 })
                    throw PostgresLogFailure("PostgreSQL did not answer the request for the writer role within \(settings.commitTimeout) (the database or the network is down?); the connection is closed, the next write connects again")
                }
            }
            state.withLock { $0.role.took() }
            return try linesOnceTaken(after: end, firstPage: request.firstPage)
        } catch let error as LogError {
            throw error
        } catch is WriterBeingConnected {
            // Nothing was sent, and the session being made is the look's: out of line as it was.
            throw LogError(.unavailable, path: path, message: "the writer's session is being connected again and was not ready in the time writes may wait (PostgreSQL answers slowly?); nothing was written: retry")
        } catch {
            throw roleNotTaken(error)
        }
    }

    /// Leaves the lock's queue (the store's writers have waited long enough): cancels the wait in
    /// line, from the reader's connection. Returns the lines others appended when the role came
    /// before the cancel did (this process holds it then), nil when it left the line.
    public func leaveLine(after end: Int64) throws(LogError) -> [UInt8]? {
        guard case .wait(let request) = state.withLock({ $0.role.ask() }) else { return nil }
        let pid = state.withLock { $0.role.writerPID }
        // Cancelled only while it still waits in line (the read behind the lock's request runs
        // once the lock is granted; a cancel that comes later finds the session idle, and does
        // nothing).
        if let reader = try? readingConnection() {
            let cancel: PostgresQuery = """
                SELECT pg_cancel_backend(pid) FROM (\(unescaped: Self.roleLocks(settings.table))) AS role
                WHERE pid = \(pid) AND NOT granted
                """
            _ = try? Self.wait(for: reader.query(cancel, logger: logger), upTo: .seconds(5), closing: reader)
        }
        do {
            _ = try Self.wait(for: request.lock, upTo: .seconds(5), closing: nil)
        } catch {
            // Cancelled (57014), or not answered: out of line either way.
            _ = roleNotTaken(error)
            return nil
        }
        state.withLock { $0.role.took() }
        // Granted before the cancel came: what the holder appended is read again (the cancel may
        // have caught the read sent behind the request).
        return try linesOnceTaken(after: end, firstPage: nil)
    }

    /// The role just taken: the lines others appended after `end`, from `firstPage` on (the
    /// request's read). Gives the role up again when they cannot be read.
    private func linesOnceTaken(after end: Int64, firstPage: EventLoopFuture<[PostgresRow]>?) throws(LogError) -> [UInt8] {
        do throws(LogError) {
            return try linesAppended(after: end, on: writer.withLock { $0 }, firstPage: firstPage)
        } catch {
            yieldWriterRole()
            throw error
        }
    }

    /// The request for the role failed with `error`: out of line; the error as the store sees it.
    private func roleNotTaken(_ error: any Error) -> LogError {
        let key = Self.lockKey(settings.table)
        let failure: LogError
        if let code = Self.sqlState(of: error), ["55P03", "57014"].contains(code) {
            // The wait in line ended by the session's lock_timeout, by its statement_timeout
            // (a little longer), or by `leaveLine`'s cancel.
            failure = LogError(.locked, path: path, message: "another process held the writer role (PostgreSQL advisory lock \(key)) and did not give it up in time: an `import`, a node whose commits take that long, or one that cannot reach the database")
        } else if error is PostgresLogFailure {
            failure = LogError(.unavailable, path: path, message: "cannot take the writer role: \(Self.describe(error))")
        } else {
            failure = LogError(.writeFailed, path: path, message: "cannot take the writer role: \(Self.describe(error))")
        }
        // Whatever the failure, the writer's session is ended (a wait that ended just as the lock
        // was granted leaves the lock with the session), and the next try connects again.
        Self.closeSoon(writer.withLock { $0 })
        state.withLock { $0.role.takeFailed(failure) }
        return failure
    }

    /// Ends the session of a holder of the writer role that has made no progress (no statement
    /// begun or ended) for `settings.stallLimit`, while this process has waited in line as long:
    /// a node stopped (SIGSTOP), frozen, swapping, or cut off on a half-open path where the
    /// database still sees its session. Keepalives cannot tell: the kernel answers for a stopped
    /// process. Only a node's shared writer session is ended (named `announcements writer` in
    /// `application_name`), never an `import`'s, and never one inside a statement. With its
    /// session the holder loses the lock; its transaction, if one was open, rolls back; and every
    /// append of its own takes the lock for its transaction (`EventRows.insertStatement`), so that it can
    /// append nothing more without taking the role again.
    private func endStalledHolder() {
        let pid = state.withLock { $0.role.writerPID }
        let query: PostgresQuery = """
            WITH role AS (\(unescaped: Self.roleLocks(settings.table)))
            SELECT a.application_name, extract(epoch FROM clock_timestamp() - a.state_change)::float8, pg_terminate_backend(a.pid)
            FROM role JOIN pg_stat_activity a ON a.pid = role.pid
            WHERE role.granted AND a.pid <> \(pid) AND a.application_name LIKE 'announcements writer %'
              AND a.state <> 'active' AND a.state_change < clock_timestamp() - make_interval(secs => \(settings.stallLimit.seconds))
            """
        do {
            let reader = try readingConnection()
            // Bounded well within a write's wait for the role (the committer waits for it).
            let result = try Self.wait(for: reader.query(query, logger: logger), upTo: min(settings.commitTimeout, .seconds(5)), closing: reader)
            for row in result.rows {
                let (name, idle, ended) = try row.decode((String, Double, Bool).self)
                guard ended else {
                    logger.warning("cannot end the session of the writer role's holder, which made no progress while this node waited for the role", metadata: ["log.path": "\(path)", "holder": "\(name)"])
                    continue
                }
                logger.warning("ended the session of the writer role's holder: it made no progress while this node waited in line for the role", metadata: [
                    "log.path": "\(path)", "holder": "\(name)", "holder.idle_seconds": "\(Int(idle))",
                ])
            }
        } catch {
            // (PostgreSQL refuses to end a session of another role: nodes connect as one role.)
            logger.warning("cannot look for a stalled holder of the writer role", metadata: ["log.path": "\(path)", "error": "\(Self.describe(error))"])
        }
    }

    /// The advisory locks of the writer role on `table` in this database: who holds it, who waits.
    static func roleLocks(_ table: String) -> String {
        """
        SELECT pid, granted FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = \(lockKey(table))
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """
    }

    public func yieldWriterRole() {
        guard state.withLock({ $0.role.yield() }) else { return }
        let writer = self.writer.withLock { $0 }
        // A session already gone holds nothing.
        guard !writer.isClosed else {
            state.withLock { $0.role.dropWriter() }
            return
        }
        // Not waited for: what this process sends next on the session (its next request for the
        // role) runs after it. One that fails gives the connection up, and the lock goes with its
        // session; one never answered leaves a session that makes no progress, which the node
        // waiting for the role ends (`endStalledHolder`).
        writer.query("SELECT pg_advisory_unlock(\(Self.lockKey(settings.table)))", logger: logger).whenFailure { [weak self] _ in
            Self.closeSoon(writer)
            // Unless the role is another connection's by now.
            guard let self, self.writer.withLock({ $0 === writer }) else { return }
            self.state.withLock { $0.role.dropWriter() }
        }
    }

    public func lines(after end: Int64) throws(LogError) -> [UInt8] {
        guard isShared, !holdsWriterRole else { return [] }
        do {
            return try linesAppended(after: end, on: readingConnection())
        } catch let error as LogError {
            throw error
        } catch {
            throw LogError(.unreadable, path: path, message: "cannot read the log: \(Self.describe(error))")
        }
    }

    /// The lines from position `end` to the table's end, read on `connection`, in pages of
    /// `settings.pageRows` rows (a node that missed much reads it in several statements, none of
    /// which may outlive the commit timeout). With `firstPage`, the answer of the first page's
    /// statement, sent earlier from a position at or before `end` (see `RoleRequest`): its rows
    /// before `end` are skipped.
    private func linesAppended(after end: Int64, on connection: PostgresConnection, firstPage: EventLoopFuture<[PostgresRow]>? = nil) throws(LogError) -> [UInt8] {
        let pageRows = max(1, settings.pageRows)
        var bytes: [UInt8] = []
        var page = firstPage
        do {
            while true {
                let next = end + Int64(bytes.count)
                let answer = try page ?? pageStatement(on: connection).execute(Self.pageBinds(from: next, rows: pageRows))
                page = nil
                let rows = try Self.wait(for: answer, upTo: settings.commitTimeout, closing: connection)
                for row in rows {
                    let (text, line) = try row.decode((String, ByteBuffer).self)
                    guard let position = Int64(text) else { throw PostgresLogFailure("a page of the table answered the position \(text)") }
                    // Taken in already (a page asked for before this process's lines went on).
                    if position + Int64(line.readableBytes) < end { continue }
                    guard position == end + Int64(bytes.count) else {
                        throw LogError(.unreadable, path: path, message: "the row at position \(position) does not follow the lines before it (they end at \(end + Int64(bytes.count))): stop the servers and run `announcements verify`")
                    }
                    bytes += line.readableBytesView
                    bytes.append(UInt8(ascii: "\n"))
                }
                if rows.count < pageRows { return bytes }
            }
        } catch let error as LogError {
            throw error
        } catch {
            throw LogError(.unreadable, path: path, message: "cannot read the lines others appended: \(Self.describe(error))")
        }
    }

    /// The statement that reads a page of rows of `table` from a position on (its parameters are
    /// `pageBinds`). Its position comes as text (see `PreparedStatements`), named apart: an output
    /// column named `position` would be what `ORDER BY position` sorts, as text ("100" before "20").
    static func pageStatement(of table: String) -> String {
        "SELECT position::text AS position_text, line FROM \(table) WHERE position >= $1::bigint ORDER BY position LIMIT $2::bigint"
    }

    /// The page statement's parameters: `rows` at most (at least one), from `position`.
    static func pageBinds(from position: Int64, rows: Int) -> [PostgresData] {
        [PostgresData(int64: position), PostgresData(int64: Int64(max(1, rows)))]
    }

    /// The page statement prepared on `connection` (already, on the writer's: `writerStatements`).
    private func pageStatement(on connection: PostgresConnection) throws -> PreparedQuery {
        try statements.statement(pageSQL, on: connection, upTo: settings.commitTimeout)
    }

    /// The statements the writer's session runs, prepared as it is set up (`open` for the first
    /// session; `writingConnection(curing:)` for the next): before it appends or asks for the
    /// role, so that neither waits for a preparation. With `procedure` (the session has the
    /// append procedure), its call too.
    static func writerStatements(_ settings: PostgresSettings, procedure: Bool) -> [String] {
        [EventRows.insertStatement(into: settings.table), pageStatement(of: settings.table)] + (procedure ? [EventRows.appendCall] : [])
    }

    public func tookIn(upTo end: Int64) {
        state.withLock { $0.role.linesEnd(at: end) }
    }

    public func follow(_ changed: @escaping @Sendable (LogChange) -> Void) {
        guard isShared, !state.withLock({ $0.role.isClosed }) else { return }
        let listener = Task.detached { [settings, channel, node, logger] in
            await Self.listen(settings, channel: channel, logger: logger) { [weak self] connection in
                self?.state.withLock { state in
                    state.listening = connection
                    if connection != nil { state.watch.connected(at: .now) }
                }
            } heard: { [weak self] payload in
                guard let self else { return }
                // Of this process's own notices, only its pings concern its listener.
                if payload.hasSuffix(node) {
                    if let token = ListenerWatch.token(inPayload: payload, node: node) { self.state.withLock { $0.watch.heard(token: token, at: .now) } }
                    return
                }
                // Told at once, without a look at the table (each look is a query, and with writes
                // spread over the nodes every commit notifies every node): the looks, four times
                // a second, catch a lost notice.
                if payload.hasPrefix("appended ") {
                    // Its sender held the role as it appended: writes through this process go there.
                    let (address, tag) = Self.address(inNotice: payload[...])
                    self.addresses.withLock { $0.heard(address, tag: tag) }
                    changed(.appended)
                }
                // Asked for the role: say so once this process has held it its quantum.
                if payload.hasPrefix("role ") { self.roleWanted(changed) }
                // Another node sealed erased rows: what this one kept of them may hold their texts.
                if payload.hasPrefix("erased ") { changed(.erased) }
            }
        }
        state.withLock { $0.listener = listener }
        let thread = Thread { [weak self] in
            while let log = self, !log.state.withLock({ $0.role.isClosed }) {
                _ = log.wake.wait(timeout: .now() + Self.lookInterval.dispatchInterval)
                log.look(changed)
                log.watchListener()
            }
        }
        thread.name = "announcements.follow"
        thread.start()
    }

    /// How often the look thread looks at the table and drives the listener's watch, at most.
    static let lookInterval = Duration.milliseconds(250)
    /// A gap between two of the look thread's turns that says this process did not run (stopped,
    /// swapped out, starved), or a look waited long: the listener's ping then gets more time.
    static let lookStall = Duration.seconds(1)

    /// Tells `changed` that another process wants the role, once this process has held it its
    /// quantum (`WriterRole.quantum`); nothing when it does not hold it.
    private func roleWanted(_ changed: @escaping @Sendable (LogChange) -> Void) {
        guard let delay = state.withLock({ $0.role.yieldDelay(at: .now) }) else { return }
        guard delay > .zero else { return changed(.roleWanted) }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay.dispatchInterval) { [weak self] in
            if self?.holdsWriterRole == true { changed(.roleWanted) }
        }
    }

    /// Does what the listener's watch says now: sends this process's ping from the reading
    /// connection, or closes a listener that did not hear the last one (it connects again).
    private func watchListener() {
        let (action, listening) = state.withLock { ($0.watch.next(at: .now), $0.listening) }
        switch action {
        case .none:
            return
        case .ping(let token):
            let payload = ListenerWatch.payload(token: token, node: node)
            do {
                let connection = try readingConnection()
                _ = try Self.wait(for: connection.query("SELECT pg_notify(\(channel), \(payload))", logger: logger), upTo: min(settings.commitTimeout, .seconds(5)), closing: connection)
                state.withLock { $0.watch.sent(token: token, at: .now) }
            } catch {
                state.withLock { $0.watch.notSent(token: token, at: .now) }
            }
        case .reconnect:
            guard let connection = listening else { return }
            logger.warning("the connection that listens for the other nodes' notices did not hear this process's own within \(settings.listenerCheck) (a half-open path?): connecting it again", metadata: ["log.path": "\(path)"])
            Self.closeSoon(connection)
        }
    }

    /// Passes `heard` every notification on `channel`, from a connection of its own, until
    /// cancelled; connects again a second after losing it. Tells `connected` the connection once
    /// it listens, and nil once it no longer does. Its session ends a client that died or stopped
    /// reading (`deadClient`): a listener that reads nothing holds back the server's queue of
    /// notifications, which every node's commits fill (a full one refuses them all).
    private static func listen(
        _ settings: PostgresSettings, channel: String, logger: Logger,
        connected: @escaping @Sendable (PostgresConnection?) -> Void, heard: @escaping @Sendable (String) -> Void
    ) async {
        while !Task.isCancelled {
            do {
                let connection = try await connect(settings, id: 4, logger: logger)
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(deadClient)"), logger: logger)
                    try await connection.listen(on: channel) { notifications in
                        connected(connection)
                        for try await notification in notifications { heard(notification.payload) }
                    }
                } catch {
                    logger.debug("lost the connection that listens for new lines; connecting again", metadata: ["error": "\(describe(error))"])
                }
                connected(nil)
                try? await connection.close()
            } catch {
                logger.debug("cannot connect to listen for new lines; trying again", metadata: ["error": "\(describe(error))"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// One look at the table: where its lines end, who waits for the writer role and who holds
    /// it, and whether this process's writer session still does (a session the server ended,
    /// which the connection has not noticed yet, would hold on to stale state: then the role is
    /// given up, and the lines others appended since are taken in). Tells `changed` what concerns
    /// this process; what it saw of the role's queue is what `writeBlock` reports.
    private func look(_ changed: @escaping @Sendable (LogChange) -> Void) {
        // The writer's session was lost (an append's outcome unknown, a failed try for the role):
        // connected again here, not at the next write, so that health can say writes can be made.
        if state.withLock({ $0.role.writerLost && !$0.role.isClosed }) {
            do {
                var cured = false
                _ = try connectingWriter.withLock { _ in try writingConnection(by: .now + settings.commitTimeout) { cured = $0 } }
                if cured { changed(.writable) }
            } catch {
                logger.debug("cannot connect the writer again", metadata: ["log.path": "\(path)", "error": "\(Self.describe(error))"])
            }
        }
        let ticket = state.withLock { $0.role.lookTicket }
        let query: PostgresQuery = """
            WITH role AS (\(unescaped: Self.roleLocks(settings.table)))
            SELECT coalesce((SELECT position + octet_length(line) + 1 FROM \(unescaped: settings.table) ORDER BY seq DESC LIMIT 1), 0),
                   coalesce((SELECT array_agg(pid) FROM role WHERE NOT granted AND pid <> \(ticket.pid)), '{}'::int[]),
                   EXISTS (SELECT 1 FROM role WHERE granted AND pid = \(ticket.pid)),
                   (SELECT role.pid FROM role WHERE role.granted AND role.pid <> \(ticket.pid) LIMIT 1),
                   (SELECT coalesce(a.application_name, 'pid ' || role.pid) FROM role
                    LEFT JOIN pg_stat_activity a ON a.pid = role.pid AND a.usename = session_user
                    WHERE role.granted AND role.pid <> \(ticket.pid) LIMIT 1)
            """
        state.withLock { $0.role.lookSent(at: .now) }
        do {
            let connection = try readingConnection()
            let result = try Self.wait(for: connection.query(query, logger: logger), upTo: settings.commitTimeout, closing: connection)
            guard let row = result.rows.first else { throw PostgresLogFailure("the look at the table answered no row") }
            let (end, waiting, sessionHolds, holderPID, holderName) = try row.decode((Int64, [Int32], Bool, Int32?, String?).self)
            let holder = holderPID.map { WriterRole<RoleRequest>.Holder(pid: $0, name: holderName ?? "pid \($0)") }
            let (durableEnd, holdsRole, lost) = state.withLock { state in
                let lost = state.role.looked(ticket, sessionHolds: sessionHolds, waiting: waiting, holder: holder, end: end, at: .now)
                return (state.role.durableEnd, state.role.holds, lost)
            }
            // Writes go to the address a notice named only while its process holds the role.
            addresses.withLock { $0.confirm(holderPID == nil ? nil : holderName) }
            if lost {
                logger.warning("the writer's session no longer holds the writer role (the server ended it?): connecting again at the next write", metadata: ["log.path": "\(path)"])
            }
            if holdsRole {
                if !waiting.isEmpty { roleWanted(changed) }
            } else if end > durableEnd {
                changed(.appended)
            }
        } catch {
            logger.debug("cannot look at the log's end", metadata: ["log.path": "\(path)", "error": "\(Self.describe(error))"])
            state.withLock { $0.role.lookFailed(Self.describe(error), at: .now) }
        }
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

    public func removeAll() throws(LogError) {
        let writer = self.writer.withLock { $0 }
        do {
            _ = try Self.wait(for: writer.query("DELETE FROM \(unescaped: settings.table)", logger: logger), upTo: settings.commitTimeout, closing: writer)
        } catch {
            throw LogError(.writeFailed, path: path, message: "cannot empty the table: \(Self.describe(error))")
        }
        state.withLock { $0.role.linesEnd(at: 0) }
    }

    public func close() {
        let (wasClosed, holdsRole, listener) = state.withLock { state in
            let (wasClosed, held) = state.role.close()
            return (wasClosed, held, state.listener)
        }
        guard !wasClosed else { return }
        listener?.cancel()
        wake.signal()
        let writer = self.writer.withLock { $0 }
        // Closing the session releases its advisory lock; unlock first all the same, so that a
        // connection slow to close does not hold the writer role meanwhile.
        // (Each step waits a bounded time: a session the server already dropped may never answer.)
        if holdsRole, !writer.isClosed {
            let unlock = writer.query("SELECT pg_advisory_unlock(\(PostgresLog.lockKey(settings.table)))", logger: logger)
            _ = try? Self.wait(for: unlock, upTo: settings.commitTimeout, closing: writer)
        }
        for connection in [writer, reader.withLock { $0 }] where !connection.isClosed {
            _ = try? Self.wait(for: connection.close(), upTo: .seconds(5), closing: connection)
        }
    }

    /// The reader's connection, connected again when it was closed.
    private func readingConnection() throws -> PostgresConnection {
        try Self.openConnection(reader, settings, id: 2, logger: logger, replacing: false, isClosed: { state.withLock { $0.role.isClosed } }) { _ in }
    }

    /// The writer's connection, connected again (with the writer's session settings) when it was
    /// closed: a shared log only, whose role a new session can take again. Made by `deadline` (the
    /// writes it is made for may wait no longer), or it fails: `notSetUp` when the database
    /// answers too slowly, `WriterBeingConnected` when the look was connecting it meanwhile and
    /// had not finished (that connection is the look's to finish and keep).
    private func writingConnection(by deadline: ContinuousClock.Instant) throws -> PostgresConnection {
        while true {
            if let connection = try connectingWriter.withLockIfAvailable({ _ in try writingConnection(by: deadline, curing: { _ in }) }) {
                return connection
            }
            // The look is connecting it again: its connection, once made, is the one taken.
            guard ContinuousClock.now < deadline else { throw WriterBeingConnected() }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// The look was connecting the writer's session again, and had not finished by the time
    /// the writes could wait: nothing of theirs was sent.
    struct WriterBeingConnected: Error {}

    /// `writingConnection(by:)`, telling `cured` whether a connection made again cures the failure
    /// of an append whose outcome was unknown (see `WriterRole.lostMidAppend`). One thread at a
    /// time (the committer, the look): the session's pid is recorded for the connection kept.
    /// Every step, from the connection to the last statement prepared, waits only what is left
    /// until `deadline`.
    private func writingConnection(by deadline: ContinuousClock.Instant, curing cured: (Bool) -> Void) throws -> PostgresConnection {
        let (lost, midAppend) = state.withLock { $0.role.reconnects() }
        func left() throws -> Duration {
            let left = deadline - .now
            guard left > .zero else { throw Self.notSetUp }
            return left
        }
        do {
            let connection = try Self.openConnection(writer, settings, id: 1, logger: logger, replacing: lost, by: deadline, isClosed: { state.withLock { $0.role.isClosed } }) { connection in
                for query in Self.writerSession(settings) {
                    let done: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
                    _ = try Self.wait(for: done, upTo: try left(), closing: connection)
                }
                let pid = try Self.wait(for: connection.query("SELECT pg_backend_pid()", logger: logger), upTo: try left(), closing: connection)
                let writerPID = try pid.rows.first?.decode(Int32.self) ?? 0
                let created = Result { _ = try Self.wait(for: connection.query(Self.appendProcedure(settings), logger: logger), upTo: try left(), closing: connection) }
                let procedure = try Self.madeAppendProcedure(created, on: connection, settings, logger: logger)
                for sql in Self.writerStatements(settings, procedure: procedure) {
                    _ = try statements.statement(sql, on: connection, upTo: try left())
                }
                state.withLock { $0.role.connected(writerPID: writerPID) }
            }
            cured(lost && midAppend)
            return connection
        } catch {
            if lost { state.withLock { $0.role.reconnectFailed(midAppend: midAppend) } }
            // A wait cut short by the deadline (each waits what is left of it), not a refusal or
            // the log's close.
            if (error as? PostgresLogFailure)?.isTimeout == true { throw Self.notSetUp }
            throw error
        }
    }

    /// The writer's session was not set up in time: PostgreSQL answered too slowly, or not at all.
    static let notSetUp = PostgresLogFailure("PostgreSQL did not set up the writer's session in the time its writes may wait (the database answers slowly, or not at all); the next write connects again")

    /// The connection `slot` holds, or a new one (set up by `prepare`) when it is closed or
    /// `replacing`, connected by `deadline` (none is begun past it: writes that already waited
    /// their time, behind a commit that hung, start no connection).
    private static func openConnection(
        _ slot: borrowing Mutex<PostgresConnection>,
        _ settings: PostgresSettings,
        id: Int,
        logger: Logger,
        replacing: Bool,
        by deadline: ContinuousClock.Instant? = nil,
        isClosed: () -> Bool,
        prepare: (PostgresConnection) throws -> Void
    ) throws -> PostgresConnection {
        let current = slot.withLock { $0 }
        guard current.isClosed || replacing else { return current }
        guard !isClosed() else { throw PostgresLogFailure("the log is closed") }
        let timeout = deadline.map { $0 - .now } ?? settings.commitTimeout
        guard timeout > .zero else { throw notSetUp }
        let fresh = try connection(settings, id: id, logger: logger, upTo: timeout)
        do {
            try prepare(fresh)
        } catch {
            closeSoon(fresh)
            throw error
        }
        logger.info("connected to PostgreSQL again", metadata: ["log.path": "\(settings.description)", "connection": "\(id == 1 ? "writer" : "reader")"])
        // Another thread may have connected again meanwhile: the first new connection stays.
        let (kept, dropped) = slot.withLock { slot in
            if slot !== current, !slot.isClosed { return (slot, fresh) }
            defer { slot = fresh }
            return (fresh, slot)
        }
        closeSoon(dropped)
        // Closed meanwhile: `close()` has closed what the slot held before; this one too.
        guard !isClosed() else {
            closeSoon(kept)
            throw PostgresLogFailure("the log is closed")
        }
        return kept
    }

    /// Runs `statement` (which sends one statement on `connection`, as a query or a prepared
    /// statement) in a transaction of its own, and answers its result once the transaction has
    /// committed. (postgres-nio answers a statement at its `CommandComplete`,
    /// which comes before an autocommitted statement commits: an error at commit time (a deferred
    /// constraint, a full `NOTIFY` queue, a serialization failure) would follow an answer already
    /// taken for success, for rows rolled back.) `BEGIN`, the statement and `COMMIT` are queued
    /// together, postgres-nio sending each once the one before is answered: one wait here. Nothing
    /// else is sent on the writer's connection meanwhile (the committer sends one batch at a time,
    /// and takes or gives up the role only between them).
    ///
    /// A failure is a refusal (`isRefusal`: nothing was committed) when the database refused, or
    /// when `BEGIN` was answered and the statement was not (`COMMIT` was then never sent: the
    /// transaction ends rolled back with its session); else its outcome is unknown.
    func committed<Answer: Sendable>(on connection: PostgresConnection, _ statement: () -> EventLoopFuture<Answer>) throws -> Answer {
        let begin = PendingAnswer(connection.query("BEGIN", logger: logger))
        let done = PendingAnswer(statement())
        let commit = PendingAnswer(connection.query("COMMIT", logger: logger))
        let committing = Result { try commit.wait(upTo: settings.commitTimeout, closing: connection) }
        // After the COMMIT's answer, or its connection's close, the two before it are answered
        // (and taken: these waits return at once).
        let began = Result { try begin.wait(upTo: .seconds(5), closing: connection) }
        let result: Answer
        do {
            result = try done.wait(upTo: .seconds(5), closing: connection)
        } catch {
            if case .success = began, !Self.isRefusal(error, on: connection) {
                throw PostgresLogFailure("\(Self.describe(error)); the transaction was never committed", isRefusal: true)
            }
            // The statement's own refusal says more than the COMMIT's ROLLBACK after it.
            throw error
        }
        // (Had `BEGIN` failed, the statement committed on its own before `COMMIT` was sent, or
        // its commit's error closed the connection and failed the `COMMIT`.)
        let tag = try committing.get().metadata.command
        guard tag == "COMMIT" else {
            throw PostgresLogFailure("the transaction ended in \(tag), not COMMIT", isRefusal: true)
        }
        return result
    }

    /// A new connection (numbered `id`, see `configuration`), waited for at most `timeout` (the
    /// commit timeout unless told). One that connects after that is closed as it comes
    /// (postgres-nio wants each closed, and an open one would hold a session in the database for
    /// nothing).
    static func connection(_ settings: PostgresSettings, id: Int, logger: Logger, upTo timeout: Duration? = nil) throws -> PostgresConnection {
        let connecting = PostgresConnection.connect(
            on: PostgresConnection.defaultEventLoopGroup.any(), configuration: try configuration(settings, connection: id), id: id, logger: logger
        )
        do {
            return try wait(for: connecting, upTo: timeout ?? settings.commitTimeout, closing: nil)
        } catch {
            connecting.whenSuccess { closeSoon($0) }
            throw error
        }
    }

    /// Whether `error`, the failure of a statement on `connection`, is the server refusing it (an
    /// `ERROR`, which rolls its transaction back, the session going on): nothing it asked for was
    /// done. Any other failure (the connection lost, a timeout, a `FATAL` that ends the session)
    /// leaves its outcome unknown.
    static func isRefusal(_ error: any Error, on connection: PostgresConnection) -> Bool {
        if let failure = error as? PostgresLogFailure { return failure.isRefusal }
        if case .server(let message) = error as? PostgresError {
            // A prepared statement's failure, in the form of postgres-nio's older interface.
            return message.fields[.severity] == "ERROR" && !connection.isClosed
        }
        let psql = error as? PSQLError
        return psql?.code == .server && psql?.serverInfo?[.severity] == "ERROR" && !connection.isClosed
    }

    /// The SQLSTATE of a statement's failure by the server, if it is one.
    static func sqlState(of error: any Error) -> String? {
        if case .server(let message) = error as? PostgresError { return message.fields[.sqlState] }
        return (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The writer's session: synchronous commits; a lock wait that lasts 0.7 of the append's own
    /// wait, and a statement that lasts 0.8 of it, are cancelled by the server (the rest leaves
    /// time for its answer, and for the `BEGIN` and `COMMIT` around an append in a session without
    /// the append procedure); a client gone silent is noticed by its keepalives, and
    /// (`tcp_user_timeout`) one that died while an answer to it was unacknowledged (mid-commit, or
    /// just granted the writer role), where Linux sends no keepalive and would retransmit for
    /// about 15 minutes, holding the role that long. A lock wait ends first, so that an append
    /// held up by a lock is refused as such (55P03: nothing committed), where a statement's
    /// cancel (57014) can come after the procedure's `COMMIT` (`committedByProcedure`). (A
    /// `lock_timeout` that fires in the microseconds after a lock wait of that length at commit,
    /// the `NOTIFY` queue's, is raised after the `COMMIT` too, and still taken for a refusal: the
    /// shared log then finds the table ending past its lines, and reads them before it appends.)
    static func writerSession(_ settings: PostgresSettings) -> [PostgresQuery] {
        func milliseconds(_ duration: Duration) -> String {
            String(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
        }
        let statement = milliseconds(settings.commitTimeout * 0.8), lock = milliseconds(lockTimeout(settings))
        return [
            "SET synchronous_commit TO on",
            "SELECT set_config('statement_timeout', \(statement), false), set_config('lock_timeout', \(lock), false), \(unescaped: deadClient)",
        ]
    }

    /// The settings with which a session's server ends a client that is gone: keepalives that go
    /// unanswered for 25 seconds (a dead host, a cut path), and (`tcp_user_timeout`) data unacknowledged,
    /// or a receive window left shut (a process stopped, or that stopped reading), for as long.
    static let deadClient = "set_config('tcp_keepalives_idle', '10', false), set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false), set_config('tcp_user_timeout', '25000', false)"

    /// The writer session's `lock_timeout`: 0.7 of the commit timeout.
    static func lockTimeout(_ settings: PostgresSettings) -> Duration {
        settings.commitTimeout * 0.7
    }

    /// Closes `connection` without waiting (kept until it is closed: postgres-nio wants that).
    static func closeSoon(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    deinit {
        // A log dropped without `close()` (a store never closed) still ends its sessions.
        state.withLock { $0.listener }?.cancel()
        Self.closeSoon(writer.withLock { $0 })
        Self.closeSoon(reader.withLock { $0 })
    }

    /// Waits for `future` (answered on SwiftNIO's event loops) at most `timeout`; then closes
    /// `connection`, whose query's outcome is unknown (a dead server or network, which a session
    /// does not always notice), and fails.
    static func wait<T: Sendable>(for future: EventLoopFuture<T>, upTo timeout: Duration, closing connection: PostgresConnection?) throws -> T {
        try PendingAnswer(future).wait(upTo: timeout, closing: connection)
    }

    /// The advisory lock key of the writer role on `table` (or of another `purpose`, such as
    /// creating it): the same in every process.
    static func lockKey(_ table: String, for purpose: String = "") -> Int64 {
        // FNV-1a of "announcements:" + the table's name (+ ":" + the purpose).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in ("announcements:" + table + (purpose.isEmpty ? "" : ":" + purpose)).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// An error from postgres-nio in words (its own description hides everything, by design).
    /// A failed connection says why, not to which host and address: the message may reach
    /// `/health` (see `LogError.placeless`); the log's path names the database for the operator.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresLogFailure { return error.message }
        if case .server(let message) = error as? PostgresError, let text = message.fields[.message] {
            return "PostgreSQL: \(text)" + (message.fields[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            return "PostgreSQL: \(message)" + (info[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
        }
        if let connection = error.underlying as? NIOConnectionError {
            // The system's own words for an I/O error (NIO's description of one reads
            // "…: Connection refused) (errno: 111)").
            var reasons = connection.connectionErrors.map { failure in
                (failure.error as? IOError).map { String(cString: strerror($0.errnoCode)) } ?? "\(failure.error)"
            }
            if reasons.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil { reasons = ["the host name does not resolve"] }
            return "\(error.code): " + (reasons.isEmpty ? "no address to connect to" : Array(Set(reasons)).sorted().joined(separator: "; "))
        }
        return "\(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
    }
}

/// A failure of the PostgreSQL log's own (not postgres-nio's).
struct PostgresLogFailure: Error {
    var message: String
    /// The database answered that it did not do what was asked (see `PostgresLog.isRefusal`).
    var isRefusal: Bool
    /// No answer came in the time waited for it (`PendingAnswer`).
    var isTimeout: Bool

    init(_ message: String, isRefusal: Bool = false, isTimeout: Bool = false) {
        self.message = message
        self.isRefusal = isRefusal
        self.isTimeout = isTimeout
    }
}
