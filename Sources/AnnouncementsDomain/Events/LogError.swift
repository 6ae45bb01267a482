/// A problem with a log file, naming the file and, where there is one, the line.
public struct LogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is: a stable code for callers to switch on.
    public enum Kind: String, Sendable, Hashable {
        /// A line is not a valid event, or does not follow from the lines before it.
        case invalidLine
        /// The file cannot be opened or read.
        case unreadable
        /// The log, or its folder, cannot be made or opened for writing, for a reason a retry
        /// cannot mend: a permission, a read-only disk, a file in the way.
        case uncreatable
        /// Another process holds the log's write lock.
        case locked
        /// The log's server (a database) cannot be reached.
        case unavailable
        /// A write, sync or truncate failed (a full disk, an I/O error).
        case writeFailed
        /// An earlier failure left the file in a state this process cannot vouch for.
        case unusable
        /// An erasure overwrote its lines, but something it was to remove is left beside them: a
        /// copy of their texts (a snapshot that cannot be deleted, a torn line set aside, old row
        /// versions `VACUUM FULL` did not remove), or its journal (sealed forms only).
        case copiesLeft
        /// An erasure's event is in the log, but the overwrite of its lines failed: they hold its
        /// texts until it is erased again, or the next start finishes it. The log takes writes.
        case sealsLeft
        /// The log is not as it was written: its hash chain is broken, or it no longer holds what
        /// was recorded of it (a snapshot, a head): changed, cut back or replaced since.
        case damaged
    }

    public var kind: Kind
    /// The log file's path, as given.
    public var path: String
    /// The 1-based line number, when the problem is on one line.
    public var line: Int?
    /// What is wrong and, where it helps, what to do.
    public var message: String

    public init(_ kind: Kind, path: String, line: Int? = nil, message: String) {
        self.kind = kind
        self.path = path
        self.line = line
        self.message = message
    }

    /// `path:line: message`, or `path: message`.
    public var description: String {
        if let line { return "\(path):\(line): \(message)" }
        return "\(path): \(message)"
    }

    /// `line N: message`, or `message`: the error without where the log is (its file's path, its
    /// database's host and user), for those who talk to the server but do not run it. The
    /// server's own log names the place.
    public var placeless: String {
        if let line { return "line \(line): \(message)" }
        return message
    }
}
