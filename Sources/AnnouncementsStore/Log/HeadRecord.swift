import AnnouncementsDomain
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The head recorded beside a log file, `<log>.head`: `SEQ:SHA256` and a newline, the form
/// `announcements backup` writes beside a backup and `verify --expect-head` reads. A store writes
/// it when it opens the log, with each snapshot, and when it closes it; start-up refuses a log that
/// no longer holds the recorded line (cut back, emptied, or replaced by an older or another copy):
/// the record proves that acknowledged lines were there, and serving the log would give their seqs
/// to new events.
public enum HeadRecord {
    /// Held while a record is written (by any store of this process).
    private static let writing = Mutex(())

    /// `<log>.head`.
    public static func path(forLog logPath: String) -> String {
        logPath + ".head"
    }

    /// The head recorded beside the log at `logPath`; nil when there is no record.
    public static func read(besideLog logPath: String) throws(LogError) -> LogHead? {
        let path = path(forLog: logPath)
        if access(path, F_OK) != 0, errno == ENOENT { return nil }
        let moveAside = "move it out of the way (mv \(path) \(path).set-aside) if the log is known to be whole"
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw LogError(.damaged, path: path, message: "the head recorded beside the log is not a file (a folder, or another kind of entry): \(moveAside)")
        }
        let bytes: [UInt8]
        do throws(LogError) {
            let file = try ReadOnlyFile(path: path)
            // `SEQ:` and 64 hex digits, a newline: anything much longer is not a record.
            bytes = try file.bytes(from: 0, count: Int(min(file.size, 128)))
        } catch {
            throw LogError(.unreadable, path: path, message: "cannot read the head recorded beside the log (\(error.message)): make it readable, or \(moveAside)")
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingSuffix { $0 == "\n" || $0 == "\r" || $0 == " " }
        guard let head = LogHead(text) else {
            throw LogError(.damaged, path: path, message: "the head recorded beside the log is not `\(LogHead.form)`: restore it from a backup, or \(moveAside)")
        }
        return head
    }

    /// Records `head` beside the log at `logPath`, replacing any record whole: a new file, synced,
    /// renamed over the old one, the folder synced. With no head (an empty log), removes the record.
    static func write(_ head: LogHead?, besideLog logPath: String) throws(LogError) {
        let path = path(forLog: logPath)
        guard let head else {
            guard unlink(path) == 0 || errno == ENOENT else {
                throw LogError.system(.writeFailed, path: path, "cannot remove the head recorded beside the log", errno: errno)
            }
            return
        }
        // One write at a time: the store's opening thread and its snapshot worker may each record
        // a head at once, and two writers of one partial file could rename it half written.
        try writing.withLock { _ throws(LogError) in
            let partial = path + ".partial"
            try FileIO.create(partial, with: Array("\(head)\n".utf8), exclusive: false, what: "the head record", like: logPath)
            guard rename(partial, path) == 0 else {
                let code = errno
                unlink(partial)
                throw LogError.system(.writeFailed, path: path, "cannot move the head record into place", errno: code)
            }
            try FileLog.syncFolder(of: path, after: "the head record is written")
        }
    }

    /// `write`, for a store: a record that cannot be written is a warning (the one there, if any,
    /// is older, and the log still holds it).
    static func record(_ head: LogHead?, besideLog logPath: String, logger: Logger) {
        do throws(LogError) {
            try write(head, besideLog: logPath)
        } catch {
            logger.warning("cannot record the log's head beside it", metadata: ["log.path": "\(logPath)", "error": "\(error)"])
        }
    }

    /// Throws unless the log at `logPath`, whose state `replay` is (indexed), holds the head
    /// recorded beside it (when there is one): its line of the recorded seq, with the recorded hash.
    /// With `logFile`, the lines are that file's (`replay` its state): one that is to become the log.
    /// `remedy`: whose refusal it is (start-up's, or an import's, whose problem is in the file it
    /// imports).
    static func check(_ replay: Replay, logPath: String, linesIn logFile: String? = nil, remedy: RecordRemedy = .startUp) throws(LogError) {
        guard let recorded = try read(besideLog: logPath) else { return }
        let path = path(forLog: logPath)
        var problemPath = logPath
        if case .importing(let source) = remedy { problemPath = source }
        guard replay.model.seq >= recorded.seq else {
            // The recorded line whole at the end but for its newline (a copy, an editor dropped
            // it): not lost, and the refusal says so, and how to mend it.
            if remedy == .startUp, recorded.seq == replay.model.seq + 1, let tail = replay.tornTail,
               let bytes = try? ReadOnlyFile(path: logFile ?? logPath).bytes(from: tail.offset, count: tail.count),
               LineHash(link: bytes) == recorded.hash {
                throw LogError(.damaged, path: problemPath, line: recorded.seq, message: RecordRemedy.newlineLost(line: recorded.seq, recordedIn: "\(path) (head \(recorded))", logPath: logPath))
            }
            throw LogError(.damaged, path: problemPath, message: remedy.headRefusal(record: path, head: recorded, endingAt: replay.model.seq))
        }
        // (Replay indexes every line it applies: a line the index lacks is not one this log holds.)
        let line = try replay.index.span(recorded.seq...recorded.seq).map { span throws(LogError) in
            try ReadOnlyFile(path: logFile ?? logPath).bytes(from: span.offset, count: span.count - 1)
        }
        guard let line, LineHash(link: line) == recorded.hash else {
            throw LogError(.damaged, path: problemPath, line: recorded.seq, message: remedy.headRefusal(record: path, head: recorded, endingAt: nil))
        }
    }
}

extension String {
    /// The string without the characters at its end that `drop` matches.
    fileprivate func trimmingSuffix(while drop: (Character) -> Bool) -> String {
        var text = self
        while let last = text.last, drop(last) { text.removeLast() }
        return text
    }
}
