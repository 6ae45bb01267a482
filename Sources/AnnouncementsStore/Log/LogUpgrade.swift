import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Rewrites a log file so that every event in it can be erased (see `LineHash(link:)`): each line
/// of format 1, and every line after the first one rewritten, is written again in the current
/// format (`"v":3`, a fresh salt for its data, a `prev`: the chain is recomputed from there on).
/// Lines of later formats before it are kept as they are: they can be erased, and upcasters read them
/// (a log is never rewritten only to be read). The log must verify sound before; the new
/// file must verify sound and replay to the same announcements after; only then does it replace
/// the old one (written beside it, synced, renamed over it). Holds the log's write lock throughout:
/// no server may run on it. It refuses a log that start-up refuses as cut back or replaced (by its
/// head record or its snapshot). The snapshot beside it is deleted (it is tagged with the old
/// chain), and the head recorded beside it (`HeadRecord`) replaced by the new head.
public enum LogUpgrade {
    /// What an upgrade did.
    public struct Outcome: Sendable {
        /// The lines rewritten (those of format 1 or without `prev`, and those after them).
        public var rewritten: Int
        public var events: Int
        /// The last line's head before and after: the old one no longer holds.
        public var oldHead: LogHead?
        public var newHead: LogHead?
    }

    public static func upgrade(path: String, rules: ValidationRules) throws(LogError) -> Outcome {
        let log = try FileLog(path: path)
        defer { log.close() }
        let before = try LogReader(path: path).verify(rules: rules)
        if let first = before.problems.first {
            throw LogError(.invalidLine, path: path, message: "the log is not sound (\(before.problems.count == 1 ? "1 problem" : "\(before.problems.count) problems; the first"): \(first)): run `announcements verify`. A line torn by a crash, or an erasure a crash interrupted, is finished by starting the server once (or `announcements init`); anything else, restore or correct before upgrading")
        }
        guard before.partialTail == nil else {
            throw LogError(.invalidLine, path: path, message: "the log ends with a line torn by a crash: start the server once (or run `announcements init`), which moves it aside, then upgrade")
        }
        // What start-up refuses, upgrade refuses too: a log that no longer holds the head recorded
        // beside it, or that a snapshot beside it says held more, lost acknowledged lines, and
        // rewriting it would bury the proof (the record, the snapshot that may be their only copy).
        try Snapshot.checkTag(besideLog: path)
        let oldReplay = try LogReader(path: path).replay(indexing: true)
        try HeadRecord.check(oldReplay, logPath: path)
        let oldModel = oldReplay.model

        // Written as it is read, in large writes: the log is never held whole in memory. Beside the
        // file the log names (a symlink stays one).
        let target = FileIO.resolved(path)
        let partial = target + ".upgrading"
        var rewritten = 0
        do throws(LogError) {
            let output = try FileWriter(creating: partial, exclusive: false, what: "the upgraded log", like: target)
            var previous: LineHash?
            var salts = SaltSource()
            try LogReader(path: path).read { line throws(LogError) in
                guard case .success(var event) = line.parsed else {
                    throw LogError(.invalidLine, path: path, line: line.number, message: "cannot be read as an event")
                }
                let start = output.buffer.count
                if !event.isErasable || event.prev != previous || rewritten > 0 {
                    event.format = Event.currentFormat
                    event.prev = previous
                    // A fresh salt for each line with data (a later format's old one is as good, but
                    // not kept by the parser; its link is recomputed either way).
                    event.encodeLine(into: &output.buffer, salt: event.hasData ? salts.salt() : nil)
                    rewritten += 1
                } else {
                    output.buffer.append(contentsOf: line.bytes)
                }
                previous = LineHash(link: output.buffer[start...])
                output.buffer.append(UInt8(ascii: "\n"))
                try output.added()
                return .continue
            }
            try output.finish()
        } catch {
            unlink(partial)
            throw error
        }
        guard rewritten > 0 else {
            unlink(partial)
            return Outcome(rewritten: 0, events: before.events, oldHead: before.head, newHead: before.head)
        }
        let after = try LogReader(path: partial).verify(rules: rules)
        let newModel = try LogReader(path: partial).replay().model
        guard after.isSound, after.events == before.events, Array(newModel.announcements) == Array(oldModel.announcements),
              newModel.erased == oldModel.erased, newModel.maxId == oldModel.maxId else {
            unlink(partial)
            throw LogError(.invalidLine, path: path, message: "the upgraded log did not verify, or did not replay to the same announcements: the log is left as it was (please report this)")
        }
        // The snapshot and the head record name the old chain, which start-up would take the new
        // log for a rewrite of: both go before the new log takes the old one's name, and the new
        // head is recorded after. Stopped anywhere between, the folder holds a log that start-up
        // takes (the old one or the new, without a record for a moment), never a log beside the
        // record of the other.
        for record in [SnapshotFile.path(forLog: path), HeadRecord.path(forLog: path)] {
            guard unlink(record) == 0 || errno == ENOENT else {
                let code = errno
                unlink(partial)
                throw LogError.system(.writeFailed, path: record, "cannot remove the record of the old chain before upgrading the log; the log is left as it was", errno: code)
            }
        }
        try FileLog.syncFolder(of: path, after: "the old chain's snapshot and head record are removed")
        guard rename(partial, target) == 0 else {
            let code = errno
            unlink(partial)
            throw LogError.system(.writeFailed, path: path, "cannot replace the log with the upgraded one; the log is left as it was (its head record is recorded again when a server next starts on it)", errno: code)
        }
        try FileLog.syncFolder(of: target, after: "the log is upgraded")
        do throws(LogError) {
            try HeadRecord.write(after.head, besideLog: path)
        } catch {
            throw LogError(.writeFailed, path: path, message: "the log is upgraded (its new head is \(after.head?.description ?? "-")), but its head cannot be recorded beside it (\(error)): a server records it when it starts")
        }
        return Outcome(rewritten: rewritten, events: after.events, oldHead: before.head, newHead: after.head)
    }
}
