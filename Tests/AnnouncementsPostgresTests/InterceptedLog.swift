import AnnouncementsDomain
import AnnouncementsStore
import Dispatch
import Synchronization

/// A log that passes everything on to `base`, and can hold an erasure's overwrite until
/// `releaseOverwrite()` (the moment between an erased event and its overwrite, made as long as a
/// test needs), or miss the notices of other processes' erasures (a listening connection that was
/// reconnecting when they came).
final class InterceptedLog: EventLog {
    let base: any EventLog
    private let holdsOverwrite: Bool
    private let missesErasureNotices: Bool
    /// Whether an erasure's overwrite has come and waits for `releaseOverwrite()`.
    let overwriteWaits = Mutex(false)
    private let released = DispatchSemaphore(value: 0)

    init(_ base: any EventLog, holdsOverwrite: Bool = false, missesErasureNotices: Bool = false) {
        self.base = base
        self.holdsOverwrite = holdsOverwrite
        self.missesErasureNotices = missesErasureNotices
    }

    func releaseOverwrite() { released.signal() }

    func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        if holdsOverwrite {
            overwriteWaits.withLock { $0 = true }
            // On the store's erasure queue: one of Dispatch's threads (on Linux, shared with
            // Swift's tasks), held only until the test, going on meanwhile, releases it.
            released.wait()
        }
        try base.eraseDurably(replacements, secrets: secrets)
    }

    func follow(_ changed: @escaping @Sendable (LogChange) -> Void) {
        let misses = missesErasureNotices
        base.follow { change in
            if misses, case .erased = change { return }
            changed(change)
        }
    }

    var path: String { base.path }
    var durableEnd: Int64 { base.durableEnd }
    func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64 { try base.appendDurably(lines, at: start) }
    var isUnusable: Bool { base.isUnusable }
    func read(from position: Int64, count: Int) throws(LogError) -> [UInt8] { try base.read(from: position, count: count) }
    var readsWait: Bool { base.readsWait }
    func close() { base.close() }
    func removeAll() throws(LogError) { try base.removeAll() }
    var erasesInPlace: Bool { base.erasesInPlace }
    var isShared: Bool { base.isShared }
    func takeWriterRole(after end: Int64, waitingAtMost slice: Duration, writesSince: ContinuousClock.Instant, until deadline: ContinuousClock.Instant) throws(LogError) -> [UInt8]? {
        try base.takeWriterRole(after: end, waitingAtMost: slice, writesSince: writesSince, until: deadline)
    }
    func leaveLine(after end: Int64) throws(LogError) -> [UInt8]? { try base.leaveLine(after: end) }
    var writeBlock: LogError? { base.writeBlock }
    func yieldWriterRole() { base.yieldWriterRole() }
    func lines(after end: Int64) throws(LogError) -> [UInt8] { try base.lines(after: end) }
    func tookIn(upTo end: Int64) { base.tookIn(upTo: end) }
}
