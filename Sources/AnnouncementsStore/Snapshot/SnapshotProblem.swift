import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a snapshot was not used: start-up then replays the whole log, and logs this as a warning.
enum SnapshotProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no snapshot file.
    case missing
    /// The snapshot file cannot be opened or read.
    case unreadable(String)
    /// The file was written by another format version of the store.
    case foreignVersion(String)
    /// The log no longer holds the line the snapshot covers last (`line`, when the log still has a
    /// line there): it was cut back, emptied, rewritten or replaced since the snapshot was written.
    case stale(String, line: Int? = nil)
    /// The log ends in the line the snapshot covers last, whole but for its newline (lost in a
    /// copy, or by an editor): the line is not lost, and the newline is all it takes.
    case newlineLost(line: Int)
    /// The file is damaged: truncated, a checksum that does not match, or contents that do not hold together.
    case corrupt(String)

    /// A short, stable name for the reason (the `snapshot.reason` of the warning).
    var reason: String {
        switch self {
        case .missing: "missing"
        case .unreadable: "unreadable"
        case .foreignVersion: "foreign version"
        case .stale, .newlineLost: "stale"
        case .corrupt: "corrupt"
        }
    }

    var description: String {
        switch self {
        case .missing: "missing: there is no snapshot file"
        case .unreadable(let detail): "unreadable: \(detail)"
        case .foreignVersion(let detail): "foreign version: \(detail)"
        case .stale(let detail, _): "stale: \(detail)"
        case .newlineLost(let line): "stale: the log ends in line \(line), the one the snapshot covers last, whole but for its newline"
        case .corrupt(let detail): "corrupt: \(detail)"
        }
    }

    /// Why a server does not start on the log at `logPath` beside this snapshot, or nil when it
    /// may (by replaying the whole log): a stale snapshot may be the only copy of the lines the log
    /// lost, which a new snapshot would replace. Start-up leaves both files as they are and says
    /// how to go on.
    func refusal(logPath: String, remedy: RecordRemedy = .startUp) -> LogError? {
        let path = SnapshotFile.path(forLog: logPath)
        if case .newlineLost(let line) = self, remedy == .startUp {
            return LogError(.damaged, path: logPath, line: line, message: RecordRemedy.newlineLost(line: line, recordedIn: path, logPath: logPath))
        }
        let (detail, line): (String, Int?)
        switch self {
        case .stale(let staleDetail, let staleLine): (detail, line) = (staleDetail, staleLine)
        case .newlineLost(let lostLine): (detail, line) = ("the log ends in line \(lostLine), the one the snapshot covers last, without its newline", lostLine)
        default: return nil
        }
        // The head recorded beside the log says the same: both go aside, or the next start refuses again.
        let head = HeadRecord.path(forLog: logPath)
        let aside = ([path] + (access(head, F_OK) == 0 ? [head] : [])).map { "mv \($0) \($0).set-aside" }.joined(separator: "; ")
        let message = remedy.snapshotRefusal(snapshot: path, detail: detail, moves: aside)
        // An import's problem is the file it imports, not a line of the empty log.
        if case .importing(let source) = remedy { return LogError(.damaged, path: source, message: message) }
        return LogError(.damaged, path: logPath, line: line, message: message)
    }
}
