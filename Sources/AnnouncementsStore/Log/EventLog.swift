import AnnouncementsDomain

/// What the store needs from the log that keeps its events: the seam between the store (the
/// committer, the read models, the feed) and where the lines live. `FileLog` is the embedded one.
///
/// A log holds *lines*: the exact bytes of the events, in seq order, each ending with a newline
/// (the hash chain covers these bytes, so every log keeps them as they are). A *position* is the
/// log's own measure of where lines end: a byte offset in a file. The store only keeps positions,
/// compares them and hands them back (the event index locates each durable line by its position
/// and length).
///
/// One process at a time holds the *writer role*: an open log holds it until `close()`, and
/// opening fails while another holds it. Appends come from one thread at a time (the store's
/// syncer), in order, each after the last; reads come from any thread, at any time, and see only
/// durable lines.
///
/// Replay is the log's reader's work, not this protocol's: the store opens with the state the log
/// folds into (see `EventStore.open`).
///
/// A *shared* log (`isShared`) is one that other processes append to as well (PostgreSQL with
/// several nodes): the writer role then moves between them. The store takes it before it appends
/// (`takeWriterRole(after:)`, which hands back the lines the others appended meanwhile), keeps it
/// while it has writes to make, and gives it up when another process asks (`yieldWriterRole()`);
/// the log tells it when that happens, and when others append (`follow`), and hands it their lines
/// (`lines(after:)`). A log only this process appends to keeps the role from open to `close()`
/// and needs none of this (the defaults).
public protocol EventLog: AnyObject, Sendable {
    /// The log's name in messages: a file's path.
    var path: String { get }

    /// Where the durable lines end: where the first append goes.
    var durableEnd: Int64 { get }

    /// Appends `lines` (whole lines, each ending with a newline) at `start`, where the lines
    /// appended before end, and makes them durable: all of them, or none. Returns where they end.
    ///
    /// On failure none of their bytes is left and the error says why; the next append may go at
    /// `start` again, unless `isUnusable` (the failure could not be undone).
    func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64

    /// Whether an earlier failed append could not be undone: the log's end is then unknown, and
    /// it takes no more appends until it is opened again (which recovers it).
    var isUnusable: Bool { get }

    /// The durable bytes from `position`, `count` of them: whole lines, with their newlines.
    func read(from position: Int64, count: Int) throws(LogError) -> [UInt8]

    /// Whether `read` may wait on something slow (a network round trip): the store then reads on
    /// threads of its own, never on Swift's cooperative pool. False for a file (a `pread`).
    var readsWait: Bool { get }

    /// Gives up the writer role; appends fail from then on. Called once appends have stopped.
    func close()

    /// Removes every line, durably, as the writer: undoes an `import` that failed into a log that
    /// was empty. Never while a store runs on the log.
    func removeAll() throws(LogError)

    /// Whether this log can erase lines in place (`eraseDurably`).
    var erasesInPlace: Bool { get }

    /// Overwrites durable lines in place with bytes of the same length (an erased line's sealed
    /// form, see `SealableLine`), durably, and removes any copy the log keeps beside it (a torn
    /// line set aside) that holds one of `secrets`. A crash midway leaves nothing half done once
    /// the log is opened again. Never runs while a read of those lines is under way.
    func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError)

    /// Whether other processes append to this log too (see above).
    var isShared: Bool { get }

    /// Takes the writer role when this process does not hold it, and returns the lines others
    /// appended after `end` (where this process's lines end): the store takes them in before it
    /// decides anything. While the process that holds the role has not given it up, returns nil
    /// after waiting at most `slice`, still in line for it: the store takes in the lines the holder
    /// appends meanwhile (`lines(after:)`) and asks again. Fails when the role cannot be had in time.
    /// `writesSince` is when the writes it is taken for came: a holder that makes no progress is
    /// ended once they have waited its stall limit (see `PostgresLog`). `deadline` is when they
    /// may wait no longer: a session made for the role (connected again) fails past it.
    func takeWriterRole(after end: Int64, waitingAtMost slice: Duration, writesSince: ContinuousClock.Instant, until deadline: ContinuousClock.Instant) throws(LogError) -> [UInt8]?

    /// Leaves the line for the writer role that `takeWriterRole` returned nil in (the store's
    /// writers have waited as long as they may). Returns the lines others appended after `end`
    /// when the role came before the line was left (this process holds it then), nil when it is
    /// out of line.
    func leaveLine(after end: Int64) throws(LogError) -> [UInt8]?

    /// Why writes through this process cannot be made now on a shared log (the writer role's
    /// queue stands still: its holder does not give it up; the last try for it failed), or nil.
    var writeBlock: LogError? { get }

    /// Gives up the writer role (between appends), so that another process waiting for it gets it.
    func yieldWriterRole()

    /// A write through this process was committed by the writer role's holder: writes through it
    /// succeed, whatever became of its own last try for the role (`writeBlock` no longer says so).
    func writeCommittedByHolder()

    /// Where writes through this process go instead, on a shared log: the address another process
    /// that holds the writer role advertised (`advertise`) with its last append, while this one
    /// does not hold the role; nil when it does, when nobody holds it, or when none is known.
    var writeHolder: String? { get }

    /// Names this process's address (an `http://HOST:PORT` other processes reach it at) in what it
    /// appends from now on, so that processes that follow it can send it their writes.
    func advertise(_ address: String)

    /// Forgets `address` as the writer role's holder (a write sent there was not answered): writes
    /// go through this process until another append names a holder. Answers whether `address` was
    /// the holder until now (false: forgotten already, or another named since).
    @discardableResult
    func forgetWriteHolder(_ address: String) -> Bool

    /// The durable lines after `end` that other processes appended; none while this process holds
    /// the writer role (nobody else appends then).
    func lines(after end: Int64) throws(LogError) -> [UInt8]

    /// The store took in the lines others appended, up to `end` (read with `takeWriterRole` or
    /// `lines(after:)`): this process's lines end there now. Not called when it could not take
    /// them in (a line it cannot read): the log then goes on saying that there are lines to take in.
    func tookIn(upTo end: Int64)

    /// Calls `changed` from now until `close()` whenever another process appends lines or asks for
    /// the writer role, or this process can append again after losing its connection.
    func follow(_ changed: @escaping @Sendable (LogChange) -> Void)
}

/// A line's new bytes, at its position (without its newline).
public struct LineReplacement: Sendable, Hashable {
    public var position: Int64
    public var bytes: [UInt8]

    public init(position: Int64, bytes: [UInt8]) {
        self.position = position
        self.bytes = bytes
    }
}

/// What a shared log tells the store that follows it.
public enum LogChange: Sendable {
    /// Another process appended lines: read them with `lines(after:)`.
    case appended
    /// Another process waits for the writer role: yield it once the appends under way are done.
    case roleWanted
    /// Another process overwrote lines in place (an erasure): drop what was kept of them.
    case erased
    /// An append failed because this process lost its connection for appends (the append's
    /// outcome unknown), and it has connected again: that failure is cured, and appends can
    /// succeed, though none has been made since.
    case writable
}

extension EventLog {
    public var readsWait: Bool { false }
    public var isShared: Bool { false }
    public var erasesInPlace: Bool { false }
    public func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        throw LogError(.writeFailed, path: path, message: "this log cannot erase lines in place")
    }
    public func takeWriterRole(after end: Int64, waitingAtMost slice: Duration, writesSince: ContinuousClock.Instant, until deadline: ContinuousClock.Instant) throws(LogError) -> [UInt8]? { [] }
    public func leaveLine(after end: Int64) throws(LogError) -> [UInt8]? { nil }
    public var writeBlock: LogError? { nil }
    public func yieldWriterRole() {}
    public func writeCommittedByHolder() {}
    public var writeHolder: String? { nil }
    public func advertise(_ address: String) {}
    public func forgetWriteHolder(_ address: String) -> Bool { false }
    public func lines(after end: Int64) throws(LogError) -> [UInt8] { [] }
    public func tookIn(upTo end: Int64) {}
    public func follow(_ changed: @escaping @Sendable (LogChange) -> Void) {}
}
