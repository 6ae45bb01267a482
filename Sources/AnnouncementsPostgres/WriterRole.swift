import AnnouncementsDomain

/// The writer role of a PostgreSQL log as this process sees it, and what follows from it: whether
/// an append may be made, whether to ask for the role or go on waiting in line, when to look for a
/// holder that makes no progress, what a failure gives up, and whether writes can be made now. A
/// value type without connections, threads or clocks of its own: `PostgresLog` holds it in a lock,
/// calls one transition at a time, and does what it returns (sends the request for the lock,
/// unlocks, drops the writer's connection, ends a stalled holder's session). `Request` is the
/// driver's pending request for the lock.
///
/// A log opened *alone* holds the role from its start to its close and never asks. A *shared* log
/// moves between `free` (not held, not asked for), `asking` (its request in the lock's queue) and
/// `holding`; losing the writer's session (a failed append whose outcome is unknown, a look that
/// finds the session no longer holds the lock) takes it back to `free`, with the connection to be
/// made again (`writerLost`).
struct WriterRole<Request> {
    enum Stage {
        /// Not held, not asked for.
        case free
        /// Asked for: `request` waits in the lock's queue since `sent`, for writes that have
        /// waited since `writesSince` (earlier when they were first sent to the holder, which did
        /// not answer).
        case asking(Request, sent: ContinuousClock.Instant, writesSince: ContinuousClock.Instant)
        /// This process's writer session holds it.
        case holding
    }

    /// A session that holds the role: its backend pid, and its `application_name` (which names the
    /// node, see `PostgresLog.configuration`).
    struct Holder: Equatable {
        var pid: Int32
        var name: String
    }

    /// Who held the role when something happened: not looked at yet, or what a look saw.
    enum Seen: Equatable {
        case unknown
        case seen(Holder?)
    }

    /// What `ask` tells the driver.
    enum Ask {
        /// The role is held already: nothing to wait for.
        case held
        /// Ask for it: notify the holder and send the request for the lock (then `asked`).
        case send
        /// Wait for the request sent earlier.
        case wait(Request)
    }

    /// What the driver does after a slice of waiting in line ended without the role.
    enum InLine: Equatable {
        /// Go on waiting.
        case wait
        /// Look for a holder that has made no progress for `stallLimit` (and end its session):
        /// this process has waited that long.
        case lookForStall
        /// The database should have ended the wait itself long ago (its `lock_timeout`): it, or
        /// the network, is gone without a word. Drop the writer's connection.
        case dropWriter
    }

    /// What a failed append leaves to do.
    enum AfterAppendFailure: Equatable {
        /// The database refused it (nothing appended): give the role up, so that the next append
        /// reads the table again first.
        case yield
        /// Its outcome is unknown, on a shared log: the role is given up with the writer's
        /// connection; the next append connects again, takes the role and reads what is there.
        case dropWriter
        /// Its outcome is unknown, on a log alone: it takes no more appends.
        case none
    }

    private(set) var stage: Stage
    let isShared: Bool
    /// Where the durable lines this process has end.
    private(set) var durableEnd: Int64
    /// How many times this process took the role: a look that began before the role was given up
    /// and taken again cannot tell whether the session holds it now.
    private(set) var takings = 0
    private(set) var isUnusable = false
    private(set) var isClosed = false
    /// The writer's connection was given up (closed, or closing): the next use connects again.
    private(set) var writerLost = false
    /// It was given up because an append's outcome was unknown (the connection failed, or its
    /// commit was not answered in time): connecting again cures the failure the store recorded.
    private(set) var lostMidAppend = false
    /// The writer's session (`pg_backend_pid()`): how `pg_locks` names it.
    private(set) var writerPID: Int32
    /// An import's transaction is open on the writer's connection: appends go into it.
    var inTransaction = false
    /// Why the last try for the role failed, while none has succeeded since and no look has found
    /// the role moved since (free, or held by another session than the one that kept it then).
    private(set) var takeFailure: LogError?
    /// Since when the table has not been read (the last look that succeeded, or the first that
    /// failed), and why the last look failed (nil: the last one succeeded): a node that cannot read
    /// the table takes in nothing, and would serve what it has as if it were current. (A look
    /// that hangs fails only at the commit timeout: the time counts from the last good one.)
    private(set) var lookFailure: (since: ContinuousClock.Instant, reason: String)?
    /// When the last look succeeded.
    private var lastGoodLook: ContinuousClock.Instant?
    /// When the look under way, if any, was sent: one the database leaves unanswered (a host gone
    /// silent) fails only at the commit timeout, and counts as failing from `unansweredAfter` on.
    private var lookSentAt: ContinuousClock.Instant?
    /// The session that held the role when the last try failed, as the first look after the
    /// failure sees it (`.unknown` until then).
    private var failedUnder = Seen.unknown
    /// The sessions the looks found waiting in line for the role, and when each was first seen.
    private var waitingSince: [Int32: ContinuousClock.Instant] = [:]
    /// Another session that held the role at the last look.
    private var otherHolder: Holder?
    /// Where the table ended at the last look.
    private var lastSeenEnd: Int64?
    /// When the role last moved or the table last grew, as the looks saw it (or this process took
    /// the role): a queue that moves is not blocked, however long some session has been in it.
    private var lastProgress: ContinuousClock.Instant?
    /// When this process last took the role.
    private var heldSince: ContinuousClock.Instant?
    /// When this process last looked for a stalled holder while in line.
    private var lastStallLook: ContinuousClock.Instant?

    /// How long a holder may make no progress while another process waits for the role, before
    /// the waiter ends its session.
    let stallLimit: Duration
    /// How long a wait in line lasts before the database ends it (the writer session's
    /// `lock_timeout`), and with a margin, before the connection is given up.
    let lockTimeout: Duration
    /// How long the role's queue may stand still before writes count as blocked (`writeBlock`).
    static var blockedAfter: Duration { .seconds(2) }
    /// How long a look may wait for its answer before writes count as blocked: longer than
    /// `blockedAfter`, as a look shares its connection with reads of lines, which it may wait behind.
    static var unansweredAfter: Duration { .seconds(5) }
    /// How often a process in line looks for a stalled holder.
    static var stallLookInterval: Duration { .seconds(1) }

    init(isShared: Bool, durableEnd: Int64, writerPID: Int32, stallLimit: Duration, lockTimeout: Duration) {
        stage = isShared ? .free : .holding
        self.isShared = isShared
        self.durableEnd = durableEnd
        self.writerPID = writerPID
        self.stallLimit = stallLimit
        self.lockTimeout = lockTimeout
    }

    var holds: Bool {
        if case .holding = stage { true } else { false }
    }

    // MARK: - Appends

    /// Whether an append at `start` may be made now: throws why not. Returns whether it goes into
    /// an import's transaction.
    func mayAppend(at start: Int64, path: String) throws(LogError) -> Bool {
        guard !isClosed else { throw LogError(.unusable, path: path, message: "the log is closed") }
        guard !isUnusable else {
            throw LogError(.unusable, path: path, message: "an earlier append's outcome is unknown (the connection failed while it ran); restart to read the log as it is")
        }
        guard holds else {
            throw LogError(.writeFailed, path: path, message: "this process does not hold the writer role (its session was lost or ended); the next write takes it again")
        }
        guard start == durableEnd else {
            throw LogError(.unusable, path: path, message: "an append was to go at position \(start), but the log's lines end at \(durableEnd)")
        }
        return inTransaction
    }

    /// This process's lines end at `end` now: its append is durable, the store took in the lines
    /// others appended, an import rolled back, the table was emptied.
    mutating func linesEnd(at end: Int64) {
        durableEnd = end
    }

    /// An append failed: `refused` when the database said it did nothing; else its outcome is
    /// unknown (the connection failed, or a timeout closed it).
    mutating func appendFailed(refused: Bool) -> AfterAppendFailure {
        if refused { return .yield }
        guard isShared else {
            isUnusable = true
            return AfterAppendFailure.none
        }
        dropWriter()
        lostMidAppend = true
        return .dropWriter
    }

    // MARK: - Taking the role

    /// The store wants the role (to append).
    func ask() -> Ask {
        switch stage {
        case .holding: .held
        case .free: .send
        case .asking(let request, _, _): .wait(request)
        }
    }

    /// The request for the lock was sent at `now`, for writes waiting since `writesSince`.
    mutating func asked(_ request: Request, at now: ContinuousClock.Instant, writesSince: ContinuousClock.Instant? = nil) {
        stage = .asking(request, sent: now, writesSince: min(writesSince ?? now, now))
        lastStallLook = nil
    }

    /// A slice of waiting in line ended at `now` without the role.
    mutating func stillInLine(at now: ContinuousClock.Instant) -> InLine {
        guard case .asking(_, let sent, let writesSince) = stage else { return .wait }
        // The database ends the wait at its lock_timeout; a quarter more is for its answer.
        if now - sent >= lockTimeout * 1.25 { return .dropWriter }
        // The writes' wait counts: a holder that did not answer them when they were sent to it
        // has had that long to make progress too.
        guard now - writesSince >= stallLimit else { return .wait }
        if let last = lastStallLook, now - last < Self.stallLookInterval { return .wait }
        lastStallLook = now
        return .lookForStall
    }

    /// The request was answered: this process holds the role.
    mutating func took(at now: ContinuousClock.Instant = .now) {
        heldSince = now
        lastProgress = now
        stage = .holding
        takings += 1
        takeFailure = nil
    }

    /// The request failed with `error` (the database ended the wait, it was cancelled, or the
    /// connection failed): this process is out of line, and its writer's connection is given up.
    /// (A wait ended just as the lock was granted leaves the lock granted to the session, error
    /// or not: only the session's end releases it for sure.)
    mutating func takeFailed(_ error: LogError) {
        stage = .free
        takeFailure = error
        failedUnder = .unknown
        writerLost = true
    }

    /// A write this process sent on to the role's holder was committed: writes through it succeed,
    /// and its own failed try for the role (which it may not make again for as long as the holder
    /// keeps the role) no longer blocks them.
    mutating func writeCommittedByHolder() {
        takeFailure = nil
    }

    /// How long a holder keeps the role once taken, however soon another asks for it: writes that
    /// come meanwhile go into its batches rather than each costing a handoff. (One with nothing to
    /// write holds the asker up that long at most.)
    static var quantum: Duration { .milliseconds(10) }

    /// Another process asked for the role at `now`: how long until this process gives it up (its
    /// `quantum` not spent yet); nil when it does not hold it.
    func yieldDelay(at now: ContinuousClock.Instant) -> Duration? {
        guard holds else { return nil }
        guard let heldSince else { return .zero }
        return max(.zero, heldSince + Self.quantum - now)
    }

    /// Gives the role up: returns whether to unlock (it was held).
    mutating func yield() -> Bool {
        guard isShared, holds else { return false }
        stage = .free
        return true
    }

    /// The writer's connection is given up (a failed unlock, a failed append, no answer in line):
    /// its session takes the role with it.
    mutating func dropWriter() {
        guard isShared else { return }
        stage = .free
        writerLost = true
    }

    /// Whether the next use of the writer's connection connects again; from then on it does not
    /// (until the next `dropWriter`), unless `reconnectFailed`.
    mutating func reconnects() -> (lost: Bool, midAppend: Bool) {
        defer { (writerLost, lostMidAppend) = (false, false) }
        return (writerLost, lostMidAppend)
    }

    /// Connecting again failed: the next use tries again (`midAppend` as `reconnects` said).
    mutating func reconnectFailed(midAppend: Bool) {
        writerLost = true
        lostMidAppend = lostMidAppend || midAppend
    }

    /// The writer's session, connected again.
    mutating func connected(writerPID pid: Int32) {
        writerPID = pid
    }

    // MARK: - Looks at the table

    /// What a look at the table needs to know before it runs: whether the role was held, by
    /// which session, after how many takings.
    struct LookTicket: Equatable {
        var held: Bool
        var pid: Int32
        var takings: Int
    }

    var lookTicket: LookTicket {
        LookTicket(held: holds, pid: writerPID, takings: takings)
    }

    /// What a look found: whether the ticket's session holds the lock, which sessions wait for
    /// it, which other session holds it, and where the table ends. Returns whether this process
    /// lost the role: it held it before the look and as far as it knows still does, with the same
    /// session (not given up and taken again meanwhile: the look may have seen the gap between),
    /// but not by the server's account, whose session is gone.
    mutating func looked(_ ticket: LookTicket, sessionHolds: Bool, waiting: [Int32], holder: Holder?, end: Int64, at now: ContinuousClock.Instant) -> Bool {
        lookFailure = nil
        lastGoodLook = now
        lookSentAt = nil
        var since: [Int32: ContinuousClock.Instant] = [:]
        for pid in waiting { since[pid] = waitingSince[pid] ?? now }
        waitingSince = since
        if holder?.pid != otherHolder?.pid || end != lastSeenEnd { lastProgress = now }
        otherHolder = holder
        lastSeenEnd = end
        if takeFailure != nil {
            switch failedUnder {
            case .unknown:
                // The first look since the failure: who keeps the role now is the baseline.
                failedUnder = .seen(holder)
                if holder == nil { takeFailure = nil }
            case .seen(let kept):
                // The role moved since the last try failed (or nobody holds it): that failure is past.
                if holder == nil || holder?.pid != kept?.pid { takeFailure = nil }
            }
        }
        let lost = ticket.held && !sessionHolds && holds && writerPID == ticket.pid && takings == ticket.takings
        if lost { dropWriter() }
        return lost
    }

    /// A look at the table is sent (its answer, or failure, follows: `looked`, `lookFailed`).
    mutating func lookSent(at now: ContinuousClock.Instant) {
        lookSentAt = now
    }

    /// A look at the table failed (the database could not be reached, or did not answer in time).
    mutating func lookFailed(_ reason: String, at now: ContinuousClock.Instant) {
        lookFailure = (lookFailure?.since ?? lastGoodLook ?? now, reason)
        lookSentAt = nil
    }

    /// How long the role's queue has stood still with some session in it: from when the first in
    /// line began to wait (this process's own request from when it was sent, another's from the
    /// first look that saw it), or from the last progress the looks saw, whichever is later.
    private func longestWait(at now: ContinuousClock.Instant) -> Duration? {
        var first = waitingSince.values.min()
        if case .asking(_, let sent, _) = stage { first = min(first ?? sent, sent) }
        guard var start = first else { return nil }
        if let lastProgress { start = max(start, lastProgress) }
        return now - start
    }

    /// Why writes cannot be made through this process now, or nil: the looks at the table have
    /// failed for `blockedAfter` (or the one under way has waited `unansweredAfter` for its answer), the role's queue has stood still for `blockedAfter` (its holder
    /// neither gives it up nor appends), or the last try for the role failed and no look has seen
    /// it move since.
    func writeBlock(at now: ContinuousClock.Instant) -> String? {
        guard isShared, !isClosed else { return nil }
        if let lookFailure, now - lookFailure.since >= Self.blockedAfter {
            let seconds = (now - lookFailure.since).components.seconds
            return "this node has not been able to read the log's table for \(seconds) s (\(lookFailure.reason)): it takes in nothing other nodes append, and its writes cannot be made"
        }
        if let sent = lookSentAt, now - sent >= Self.unansweredAfter {
            let seconds = (now - (lastGoodLook ?? sent)).components.seconds
            return "this node has not been able to read the log's table for \(seconds) s (the database has not answered a look at it for \((now - sent).components.seconds) s): it takes in nothing other nodes append, and its writes cannot be made"
        }
        if let wait = longestWait(at: now), wait >= Self.blockedAfter {
            let tenths = wait.components.seconds * 10 + wait.components.attoseconds / 100_000_000_000_000_000
            let holder = otherHolder.map { " (\($0.name))" } ?? ""
            return "writes wait for the writer role: a node has waited \(tenths / 10).\(tenths % 10) s in line for it while its holder\(holder) neither gave it up nor appended; a holder that makes no progress for \(stallLimit) loses it"
        }
        return takeFailure.map { "the last try for the writer role failed: \($0.placeless)" }
    }

    // MARK: - Closing

    /// Closes: returns whether it was closed already, and whether the role was held (to unlock).
    mutating func close() -> (wasClosed: Bool, held: Bool) {
        defer { isClosed = true }
        return (isClosed, holds)
    }
}
