/// What to do about a log that lacks lines recorded beside it (its head, a snapshot's tag), in the
/// words of whoever refuses it: start-up, which does not serve it (and `verify`, which says so),
/// or an import, which does not fill the emptied log with a file that lacks them.
public enum RecordRemedy: Sendable, Equatable {
    case startUp
    /// An import of the log file `source` into the emptied log.
    case importing(from: String)

    /// The refusal of a log that lacks the head recorded in `record`: one that ends at seq `end`,
    /// before it, or (`end` nil) whose line of the head's seq is another. An import's is of the
    /// file it imports (the error names it).
    public func headRefusal(record: String, head: LogHead, endingAt end: Int?) -> String {
        let detail: String
        switch (self, end) {
        case (.startUp, let end?):
            detail = "the log \(end == 0 ? "is empty" : "ends at seq \(end)"), but \(record) records that it held \(head.seq) lines (head \(head)): it was cut back, emptied or replaced by an older copy since"
        case (.startUp, nil):
            detail = "line \(head.seq) is not the line \(record) records (head \(head)): it was changed, or the log rewritten or replaced, since"
        case (.importing, let end?):
            detail = "it \(end == 0 ? "is empty" : "ends at seq \(end)"), but \(record) records that the log it is imported into held \(head.seq) lines (head \(head))"
        case (.importing, nil):
            detail = "line \(head.seq) is not the line \(record) records of the log it is imported into (head \(head))"
        }
        return detail + ": " + text(
            holding: "\(head)", check: " (`announcements verify --log FILE --expect-head \(head)` checks one)",
            givingUp: "what it lost", moving: "the record", "mv \(record) \(record).set-aside"
        )
    }

    /// The refusal of a log at `logPath` that ends in line `line` as `record` (its snapshot or its
    /// head's record) knows it, whole but for its newline (a copy, an editor dropped it): nothing
    /// is lost, and adding the newline mends it.
    public static func newlineLost(line: Int, recordedIn record: String, logPath: String) -> String {
        "the log ends in line \(line) as \(record) records it, whole but for its newline, which was lost (a copy, an editor): the server does not start on it. Add the newline (printf '\\n' >> \(logPath)) and start again"
    }

    /// The refusal of a log that lacks what the snapshot at `snapshot` covers, as `detail` says
    /// (start-up's words of the log it checked; an import's are of the file it imports).
    public func snapshotRefusal(snapshot: String, detail: String, moves: String) -> String {
        let reason = switch self {
        case .startUp: "\(detail), and the snapshot beside it (\(snapshot)) may be the only copy of what the log lost"
        case .importing: "it does not hold the lines that the snapshot beside the log it is imported into (\(snapshot)) covers"
        }
        return reason + ": " + text(holding: "those lines", givingUp: "what only the snapshot holds", moving: "what was recorded of it", moves)
    }

    /// The remedies: a backup that holds `lines` (`check`: how to check one, if anything), or,
    /// giving up `loss`, `records` moved aside (`moves`, the commands).
    private func text(holding lines: String, check: String = "", givingUp loss: String, moving records: String, _ moves: String) -> String {
        switch self {
        case .startUp:
            "the server does not start on it. Restore the log from a backup that holds \(lines)\(check); or, to serve this log as it is and give up \(loss), move \(records) out of the way first (\(moves))"
        case .importing(let source):
            "this import leaves that log empty. Import a backup that holds \(lines)\(check); or, to start that log anew from \(source), move \(records) out of the way first (\(moves))"
        }
    }
}
