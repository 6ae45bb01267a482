import AnnouncementsDomain

/// Why a snapshot was not used: start-up then replays the whole log, and logs this as a warning.
enum SnapshotProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no snapshot file.
    case missing
    /// The snapshot file cannot be opened or read.
    case unreadable(String)
    /// The file was written by another format version of the store.
    case foreignVersion(String)
    /// The log no longer holds the line the snapshot covers last: it was cut back or rewritten.
    case stale(String)
    /// The file is damaged: truncated, a checksum that does not match, or contents that do not hold together.
    case corrupt(String)

    /// A short, stable name for the reason (the `snapshot.reason` of the warning).
    var reason: String {
        switch self {
        case .missing: "missing"
        case .unreadable: "unreadable"
        case .foreignVersion: "foreign version"
        case .stale: "stale"
        case .corrupt: "corrupt"
        }
    }

    var description: String {
        switch self {
        case .missing: "missing: there is no snapshot file"
        case .unreadable(let detail): "unreadable: \(detail)"
        case .foreignVersion(let detail): "foreign version: \(detail)"
        case .stale(let detail): "stale: \(detail)"
        case .corrupt(let detail): "corrupt: \(detail)"
        }
    }
}
