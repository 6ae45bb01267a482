import AnnouncementsDomain

/// Whether the store's writes can succeed now: what a health check reports.
public enum StoreHealth: Sendable, Hashable {
    /// No write has failed since the last one that succeeded (or since the store opened).
    case ok
    /// The last write or sync failed (a full disk, an I/O error) and was undone: writes go on
    /// being tried as they come, and the first that succeeds makes the store `ok` again.
    case failing(LogError)
    /// Writes wait for something outside this process (a shared log's writer role, which another
    /// holds and does not give up; lines another appended that this one cannot take in), whose
    /// error says what: they fail once they have waited their limit, or at once. Clears by itself
    /// when that changes.
    case blocked(LogError)
    /// A failed write could not be undone, so where the log ends is unknown, or the log file
    /// changed under the server: no write succeeds until the server restarts (and its start-up
    /// recovers the log, or reads it as it is now).
    case unusable(LogError)
    /// The store is closed: the server is stopping.
    case closed

    /// Whether writes can succeed.
    public var isOK: Bool { self == .ok }

    /// The state without its error (a metric's label).
    public enum State: String, CaseIterable, Sendable {
        case ok, failing, unusable, closed
    }

    public var state: State {
        switch self {
        case .ok: .ok
        case .failing, .blocked: .failing
        case .unusable: .unusable
        case .closed: .closed
        }
    }

    /// Why writes cannot succeed, and what to do; nil when they can. It does not say where the
    /// log is (`LogError.placeless`): `/health` tells anyone who asks.
    public var reason: String? {
        switch self {
        case .ok:
            nil
        case .failing(let error):
            "the last write to the log failed (\(error.placeless)); the next write tries again"
        case .blocked(let error):
            error.placeless
        case .unusable(let error) where error.kind == .unusable:
            // The error says why itself (the log changed under the server).
            "the log is unusable (\(error.placeless)); restart the server to recover it"
        case .unusable(let error):
            "the log is unusable: a write failed and could not be undone (\(error.placeless)); restart the server to recover it"
        case .closed:
            "the store is closed: the server is stopping"
        }
    }
}
