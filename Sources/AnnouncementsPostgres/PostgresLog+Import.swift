import AnnouncementsDomain
import AnnouncementsStore

extension PostgresLog {
    /// Appends the complete lines of the log file at `path` (what `import` does) in durable
    /// batches of about `batchBytes`, all in one transaction on the writer's connection: the rows
    /// become visible, and durable, at its commit, or not at all. An import that fails, or whose
    /// process is killed midway (its session ends, and the database rolls the transaction back),
    /// leaves the table as it found it, never a prefix that verifies and passes for the whole log.
    /// Returns where the lines end.
    public func importLines(of path: String, batchBytes: Int = 4 << 20) throws(LogError) -> Int64 {
        let start = durableEnd
        let writer = self.writer.withLock { $0 }
        do {
            _ = try Self.wait(for: writer.query("BEGIN", logger: logger), upTo: settings.commitTimeout, closing: writer)
        } catch {
            throw LogError(.writeFailed, path: self.path, message: "cannot begin the import's transaction: \(Self.describe(error))")
        }
        let end: Int64
        state.withLock { $0.role.inTransaction = true }
        defer { state.withLock { $0.role.inTransaction = false } }
        do throws(LogError) {
            end = try append(linesOf: path, batchBytes: batchBytes)
        } catch {
            // Rolled back here, or by the database when the connection was lost.
            _ = try? Self.wait(for: writer.query("ROLLBACK", logger: logger), upTo: settings.commitTimeout, closing: writer)
            state.withLock { $0.role.linesEnd(at: start) }
            throw LogError(error.kind, path: error.path, line: error.line, message: error.message + "; the import was rolled back: the table is as it was")
        }
        do {
            _ = try Self.wait(for: writer.query("COMMIT", logger: logger), upTo: settings.commitTimeout, closing: writer)
        } catch {
            // Refused, it rolled back; unanswered (the connection lost, a timeout), it may have
            // committed: all of the import is in the table, or none of it.
            state.withLock { $0.role.linesEnd(at: start) }
            let outcome = Self.isRefusal(error, on: writer) ? "the import was rolled back: the table is as it was" : "whether it was committed is unknown: the table holds all of the import or none of it (`announcements verify` says which)"
            throw LogError(.writeFailed, path: self.path, message: "cannot commit the import (\(Self.describe(error))): \(outcome)")
        }
        return end
    }
}
