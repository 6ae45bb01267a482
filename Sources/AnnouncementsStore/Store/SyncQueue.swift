import AnnouncementsDomain

/// The decisions of the log's syncer (`LogSyncer`): which lines go into the next append, where they
/// go, how far the log is durable, and what a failure stops. A value type without threads or a
/// log: the syncer holds it in a lock and does what its transitions return.
///
/// Lines are handed over in order; each append takes everything handed over since the last one
/// began (group commit). An append that fails leaves none of its bytes: the lines handed over after
/// them were prepared on top of them and are dropped too, and nothing is taken until the committer
/// has seen the failure (`resume(after:)`).
struct SyncQueue {
    /// Lines handed over and not yet durable: an append failed for `start..<end`.
    struct Failure: Error {
        var start: Int64
        var end: Int64
        var error: LogError
    }

    /// An append to make: `bytes` (`count` lines) at `start`.
    struct Append {
        var bytes: [UInt8]
        var count: Int
        var start: Int64
    }

    /// Lines handed over and not yet taken, in order, and where the first goes in the log.
    private var pending: [[UInt8]] = []
    private var pendingCount = 0
    private var pendingStart: Int64
    /// Whether an append loop runs (on the syncer's thread, or inline on the committer's).
    private(set) var isRunning = false
    /// Everything before it is durable.
    private(set) var durableEnd: Int64
    /// The failure that stopped the syncer, until `resume(after:)`.
    private(set) var failure: Failure?
    private(set) var isClosed = false
    /// The last append's error, until one succeeds; whether it left the log unusable.
    private var lastError: LogError?
    private var isUnusable = false

    /// The log's path, for the error of lines handed over once it is closed.
    private let path: String

    /// A queue for the log at `path`, durable up to `end`.
    init(path: String, durableEnd end: Int64) {
        self.path = path
        pendingStart = end
        durableEnd = end
    }

    /// Where the next lines handed over will go (after a failure, until `resume`, the end of the
    /// lines that failed).
    var end: Int64 {
        pendingStart + Int64(pending.reduce(0) { $0 + $1.count })
    }

    /// Whether appends can succeed: the last one did (or none was made), or why not.
    var health: StoreHealth {
        if let lastError { return isUnusable ? .unusable(lastError) : .failing(lastError) }
        return isClosed ? .closed : .ok
    }

    /// `count` lines handed over, to go after those before. Returns whether the caller starts the
    /// append loop (none runs); throws, taking nothing, while a failure waits or once closed.
    mutating func hand(_ lines: [UInt8], count: Int) throws(Failure) -> Bool {
        if let failure { throw failure }
        guard !isClosed else {
            throw Failure(start: pendingStart, end: pendingStart, error: LogError(.unusable, path: path, message: "the log is closed"))
        }
        pending.append(lines)
        pendingCount += count
        defer { isRunning = true }
        return !isRunning
    }

    /// The loop's next append: everything handed over, in one; nil when there is nothing (or a
    /// failure stopped it), and the loop ends.
    mutating func next() -> Append? {
        guard !pending.isEmpty, failure == nil else {
            isRunning = false
            return nil
        }
        var bytes = pending[0]
        for more in pending.dropFirst() { bytes.append(contentsOf: more) }
        let append = Append(bytes: bytes, count: pendingCount, start: pendingStart)
        pendingStart += Int64(bytes.count)
        pending = []
        pendingCount = 0
        return append
    }

    /// An append succeeded: the log is durable up to `end`.
    mutating func appended(upTo end: Int64) {
        durableEnd = end
        lastError = nil
    }

    /// `append` failed with `error` (`unusable`: the log could not be cut back): what was handed
    /// over after it is dropped, and the loop ends.
    mutating func failed(_ append: Append, with error: LogError, unusable: Bool) {
        failure = Failure(start: append.start, end: append.start + Int64(append.bytes.count), error: error)
        pending = []
        pendingCount = 0
        isRunning = false
        // The failure that made the log unusable stays the reason: later ones only repeat it.
        if !isUnusable { lastError = error }
        isUnusable = unusable
    }

    /// Takes lines again after `failure`, from where it cut the log back.
    mutating func resume(after failure: Failure) {
        self.failure = nil
        pending = []
        pendingCount = 0
        pendingStart = failure.start
    }

    /// The cause of the last failure is gone (a shared log's writer connected again after its
    /// session was lost): appends can succeed, though none has been made since. Not once the log
    /// is unusable.
    mutating func writable() {
        if !isUnusable { lastError = nil }
    }

    /// Moves on to `end`, past lines another process appended to a shared log.
    mutating func advance(to end: Int64) {
        pendingStart = end
        durableEnd = end
    }

    /// Takes no more lines.
    mutating func close() {
        isClosed = true
    }
}
