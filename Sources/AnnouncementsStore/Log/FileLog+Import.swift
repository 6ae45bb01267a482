import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileLog {
    /// Fills this log, which must be empty, with the lines of the log file `source`: written to a
    /// file beside it (`<log>.importing`, with the log's owner and permissions) in durable batches
    /// of `batchBytes`, checked by `check` (given the copy's path), and only then renamed over the
    /// log. An import cut short (a failure, a kill, a crash) leaves the log empty, never a part of
    /// `source` that could pass for the whole; the next open of the log removes the leftover. A log
    /// emptied since it held lines (a head record or a snapshot beside it says so) takes only a
    /// source that holds them (`checkRecords`).
    /// Returns the number of bytes imported.
    public func importLines(of source: String, batchBytes: Int = 4 << 20, check: (_ copy: String) throws(LogError) -> Void) throws(LogError) -> Int64 {
        guard durableEnd == 0 else {
            throw LogError(.unusable, path: path, message: "the log is not empty (\(durableEnd) bytes): import only into an empty log")
        }
        // The file itself (a log named through a symlink keeps its link: the copy replaces the target).
        let target = FileIO.resolved(path)
        let copyPath = target + ".importing"
        unlink(copyPath)  // an earlier import's leftover: this process holds the log's lock
        let end: Int64
        do throws(LogError) {
            // Made private, with the log's owner and permissions, before a line goes in.
            try FileIO.create(copyPath, with: [], exclusive: true, what: "the imported log", like: target)
            let copy = try FileLog(path: copyPath)
            defer { copy.close() }
            end = try copy.append(linesOf: source, batchBytes: batchBytes)
            try checkRecords(holdBy: copyPath, source: source)
            try check(copyPath)
        } catch {
            unlink(copyPath)
            // Left as it was: a log this import made (its file was missing) goes too; the file,
            // not a link that names it.
            if created { unlink(target) }
            throw error
        }
        guard rename(copyPath, target) == 0 else {
            let code = errno
            unlink(copyPath)
            let hint = code == EBUSY || code == EXDEV ? " (is the log a file mounted on its own? import into a log in a mounted folder instead)" : ""
            throw LogError.system(.writeFailed, path: path, "cannot put the imported log in place\(hint); the log is left empty", errno: code)
        }
        try Self.syncFolder(of: target, after: "the log is imported")
        return end
    }

    /// Throws unless the copy at `copy` holds the lines the records beside this log say it held
    /// (its head, a snapshot's tag): an empty log beside them was emptied, not made, and those
    /// lines were acknowledged. A restore from a backup that holds them is taken; any other log
    /// is refused, as start-up would refuse it, in an import's words (`source`'s).
    private func checkRecords(holdBy copy: String, source: String) throws(LogError) {
        try Snapshot.checkTag(besideLog: path, linesIn: copy, remedy: .importing(from: source))
        guard try HeadRecord.read(besideLog: path) != nil else { return }
        try HeadRecord.check(try LogReader(path: copy).replay(indexing: true), logPath: path, linesIn: copy, remedy: .importing(from: source))
    }
}
