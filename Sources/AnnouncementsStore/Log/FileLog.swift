import AnnouncementsDomain
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The log as a file of JSON lines (the embedded `EventLog`, the default): opened for appending,
/// holding the file's exclusive write lock (the writer role) until it is closed.
///
/// `@unchecked Sendable`: a `FileLog` is created by `EventStore.open` (which recovers a torn line
/// with it) and from then on written, synced and cut back only by the store's `LogSyncer`, on its
/// serial queue; `close()` (atomic, touching only the descriptor) comes once that queue is idle.
/// Reads go through a read-only descriptor of their own (`pread`: any thread, any time), and an
/// erasure's overwrite through a write-only one it opens for itself (see `FileLog+Erasure`).
public final class FileLog: EventLog, @unchecked Sendable {
    public let path: String
    /// The open file (internal so that tests can duplicate it, as a forked child process would).
    let fd: Int32
    private let isClosed = Atomic(false)
    let operations: FileOperations
    /// The file opened for reading durable lines back.
    let reader: ReadOnlyFile
    /// The length of the file up to its last good line: where the next write goes.
    private(set) var length: Int64
    /// Set when a failed append could not be undone: the file's end is then unknown.
    public private(set) var isUnusable = false
    /// Reads share it; an erasure's overwrite takes it alone.
    let readGate = ReadGate()
    /// The file opened: what its path must still name (see `checkUnchanged`).
    let identity: FileIO.Identity
    /// Whether opening the log made the file (there was none at its path).
    let created: Bool

    /// Opens (creating if absent) `path` for appending and takes its exclusive lock, failing at once
    /// when another process holds it.
    public convenience init(path: String) throws(LogError) {
        try self.init(path: path, operations: .system)
    }

    /// `init(path:)`, with the system calls the log's writer makes (for tests).
    init(path: String, operations: FileOperations) throws(LogError) {
        self.path = path
        self.operations = operations
        let folder = Self.folder(of: path)
        let made = Self.makeFolders(folder)
        guard made.error == 0 else {
            throw LogError(Self.creationFailure(made.error), path: path, message: Self.folderProblem(made))
        }
        created = access(path, F_OK) != 0
        // Readable by its owner only: it holds every text, erased ones until they are overwritten.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw LogError.system(Self.creationFailure(code), path: path, "cannot open the log for writing", errno: code)
        }
        try FileIO.lockOrClose(fd, LOCK_EX, path: path, whenHeld: "another process is writing to this log (it holds the write lock); stop it, or use another log file")
        (self.length, self.identity) = try FileIO.sizeAndIdentityOrClose(fd, path: path)
        // Lines a killed writer wrote and never synced are read as the log's own: sync them before
        // anything (a head record, a snapshot, an answer) is made of them, so that a power loss
        // after this start cannot take them back.
        if length > 0, operations.sync(fd) != 0 {
            let code = errno
            flock(fd, LOCK_UN)
            FileIO.close(fd)
            throw LogError.system(.unreadable, path: path, "cannot sync the log's lines to disk as it opens", errno: code)
        }
        do throws(LogError) {
            self.reader = try ReadOnlyFile(path: path)
        } catch {
            flock(fd, LOCK_UN)
            FileIO.close(fd)
            throw error
        }
        self.fd = fd
        self.writtenEnd = length
        do throws(LogError) {
            // A new log's name must be durable before its first line is answered: a power loss
            // could otherwise take the whole file. Synced while the log is empty, also on a start
            // after one whose sync failed.
            if length == 0 {
                let code = operations.syncFolder(folder)
                guard code == 0 else { throw LogError.system(.writeFailed, path: path, "the log is created, but its folder cannot be synced to make its name durable", errno: code) }
            }
            try finishInterruptedErasure()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Releases the lock and closes the file. Only the first call closes.
    ///
    /// The lock is released explicitly, before the descriptor closes: a lock taken with `flock`
    /// belongs to the open file, which a child process forked meanwhile (by anything in this
    /// process that starts a program) shares until it runs its program. Closing alone would leave
    /// the lock held for that long, and reopening the log right after would find it taken.
    public func close() {
        if isClosed.exchange(true, ordering: .acquiringAndReleasing) { return }
        flock(fd, LOCK_UN)
        FileIO.close(fd)
    }

    /// The end of everything written, synced or not: where the next write goes.
    private(set) var writtenEnd: Int64 = 0

    // MARK: - EventLog

    public var durableEnd: Int64 { length }

    /// Writes `lines` at the end and syncs them; on failure cuts the file back to `start` (and
    /// makes the cut durable, or marks the file unusable) and throws.
    public func appendDurably(_ lines: UnsafeRawBufferPointer, at start: Int64) throws(LogError) -> Int64 {
        guard start == writtenEnd else {
            throw LogError(.unusable, path: path, message: "an append was to go at byte \(start), but the log's lines end at \(writtenEnd)")
        }
        try checkUnchanged()
        // (`write` cuts a failed write back itself.)
        let end = try write(lines)
        do throws(LogError) {
            try sync()
        } catch {
            cutBack(to: start)
            throw undone(error)
        }
        markDurable(upTo: end)
        return end
    }

    /// Fails, marking the log unusable, when the file is no longer as this log left it: another
    /// file has its name (restored or replaced under a running server), it is gone, or its length
    /// changed (cut, or copied over in place). Writing on would put lines where no reader finds
    /// them, or after a hole of zeros; nothing is written, and nothing of the file is touched.
    /// One `stat` per durable append (not per line), beside a sync of 150 µs or more; and one
    /// before the last snapshot at close.
    func checkUnchanged() throws(LogError) {
        var named = stat()
        let isNamed = stat(path, &named) == 0
        // Only a path that names nothing means gone; any other failure (a network file system's
        // hiccup, a permission) cannot tell, and the write goes on.
        if !isNamed, errno != ENOENT, errno != ENOTDIR { return }
        let change: String? =
            if !isNamed {
                "the file is gone from its path"
            } else if named.st_ino != identity.inode || named.st_dev != identity.device {
                "another file has its name now (restored or replaced while the server ran?)"
            } else if Int64(named.st_size) != writtenEnd {
                "it is \(named.st_size) bytes long where this server wrote \(writtenEnd) (cut, or copied over, while the server ran?)"
            } else {
                nil
            }
        guard let change else { return }
        isUnusable = true
        throw LogError(.unusable, path: path, message: "the log changed under the server: \(change); it takes no more writes: stop the server, check the log with `announcements verify`, and start the server again")
    }

    public func read(from position: Int64, count: Int) throws(LogError) -> [UInt8] {
        try readGate.reading { () throws(LogError) in try reader.bytes(from: position, count: count) }
    }

    /// Writes `bytes` after everything written so far, not yet durable: `sync()` and then
    /// `markDurable(upTo:)` make them so. On failure the file is cut back to where the write began,
    /// so no partial line is left, and the error is thrown. Returns where the bytes end.
    func write(_ bytes: UnsafeRawBufferPointer) throws(LogError) -> Int64 {
        guard !isUnusable else {
            throw LogError(.unusable, path: path, message: "an earlier write failed and could not be undone; restart to recover the log")
        }
        let start = writtenEnd
        var written = 0
        while written < bytes.count {
            let result = operations.write(fd, UnsafeRawBufferPointer(rebasing: bytes[written...]), start + Int64(written))
            if result < 0 {
                if errno == EINTR { continue }
                let error = LogError.system(.writeFailed, path: path, "cannot append to the log", errno: errno)
                cutBack(to: start)
                throw undone(error)
            }
            if result == 0 {
                cutBack(to: start)
                throw undone(LogError(.writeFailed, path: path, message: "cannot append to the log: the write made no progress"))
            }
            written += result
        }
        writtenEnd = start + Int64(bytes.count)
        return writtenEnd
    }

    /// `error`, the failure of an append just cut back; when the cut failed too (the file is now
    /// unusable), an error that says so: the lines may still be in the file, and come back at
    /// the next start, so the writes' outcome is unknown, not "not written".
    private func undone(_ error: LogError) -> LogError {
        guard isUnusable else { return error }
        return LogError(.unusable, path: path, message: "\(error.message), and the lines could not be cut back off the log: whether these writes are in it is unknown (a restart may find them there). Restart the server; send them again with the same Idempotency-Key, which a write that did land answers as it was")
    }

    /// Flushes what has been written to the disk.
    func sync() throws(LogError) {
        guard operations.sync(fd) == 0 else {
            throw LogError.system(.writeFailed, path: path, "cannot sync the log to disk", errno: errno)
        }
    }

    /// Records that everything up to `end` is synced: good lines from now on.
    func markDurable(upTo end: Int64) {
        length = max(length, end)
    }

    /// Cuts the file back to `offset` (never below its durable length) after a failed write or sync,
    /// and makes the cut durable; marks the file unusable if even that fails.
    package func cutBack(to offset: Int64) {
        // Never below the durable length, and never past what is written: a cut to an offset an
        // earlier cut already removed must not lengthen the file (ftruncate would fill it with zeros).
        let offset = min(max(offset, length), writtenEnd)
        writtenEnd = offset
        if ftruncate(fd, off_t(offset)) != 0 || operations.sync(fd) != 0 {
            isUnusable = true
        }
    }

    public func removeAll() throws(LogError) {
        guard ftruncate(fd, 0) == 0, operations.sync(fd) == 0 else {
            throw LogError.system(.writeFailed, path: path, "cannot empty the log", errno: errno)
        }
        length = 0
        writtenEnd = 0
    }

    /// Moves the bytes from `offset` to the end into a side file next to the log (a torn last line,
    /// kept for inspection, never deleted), then cuts the log at `offset`. Returns the side file's path.
    func setAside(from offset: Int64) throws(LogError) -> String {
        let count = Int(length - offset)
        var torn = [UInt8](repeating: 0, count: count)
        let readError = torn.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: offset) }
        guard readError == 0 else { throw LogError.system(.unreadable, path: path, "cannot read the torn last line", errno: readError) }

        var sidePath = path + ".torn-" + Timestamp.now().compactDescription
        var suffix = 1
        while access(sidePath, F_OK) == 0 {
            suffix += 1
            sidePath = path + ".torn-" + Timestamp.now().compactDescription + "-\(suffix)"
        }
        try FileIO.create(sidePath, with: torn, exclusive: true, what: "the side file for a torn line", like: path)
        // The side file's name durable before the bytes leave the log.
        let code = operations.syncFolder(Self.folder(of: path))
        guard code == 0 else {
            throw LogError.system(.writeFailed, path: path, "the torn last line is copied to \(sidePath), but the folder cannot be synced to make that durable, so the line is left in the log", errno: code)
        }
        guard ftruncate(fd, off_t(offset)) == 0, operations.sync(fd) == 0 else {
            throw LogError.system(.writeFailed, path: path, "cannot cut the torn line from the log", errno: errno)
        }
        length = offset
        writtenEnd = offset
        return sidePath
    }

    /// Creates `folder` and the folders it is in, as `mkdir -p` does: the folder that could not be
    /// made (or made durable: its entry in its parent synced) and the errno, or 0 when all are there.
    package static func makeFolders(_ folder: String) -> (folder: String, error: Int32) {
        if let isFolder = isFolder(folder) { return (folder, isFolder ? 0 : ENOTDIR) }
        let parent = Self.folder(of: folder)
        if parent != folder {
            let made = makeFolders(parent)
            guard made.error == 0 else { return made }
        }
        guard mkdir(folder, 0o755) == 0 else {
            let code = errno
            guard code == EEXIST else { return (folder, code) }
            // Made meanwhile by another process, or there but not a folder (a dangling link).
            return (folder, isFolder(folder) == true ? 0 : ENOTDIR)
        }
        return (folder, syncFolder(parent))
    }

    /// The kind of a failure to make or open the log (or its folder) for writing: one a restart
    /// cannot mend (a permission, a read-only disk, something in the way) is `uncreatable`; the
    /// others (a full disk, an I/O error, too many open files) may pass.
    static func creationFailure(_ code: Int32) -> LogError.Kind {
        [EACCES, EPERM, EROFS, EISDIR, ENOTDIR].contains(code) ? .uncreatable : .unreadable
    }

    /// What kept `makeFolders` from making a folder, in words: a file where a folder should be
    /// (`ENOTDIR`) is named as such, not as a folder that could not be created.
    package static func folderProblem(_ made: (folder: String, error: Int32)) -> String {
        made.error == ENOTDIR
            ? "\(made.folder) is not a folder (a file, or a link to nothing, is in its place)"
            : "cannot create the folder \(made.folder): \(String(cString: strerror(made.error)))"
    }

    /// Whether `path` names a folder (through links); nil when it names nothing.
    private static func isFolder(_ path: String) -> Bool? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT == S_IFDIR
    }

    package static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Makes a new directory entry durable: 0, or the errno of a folder that could not be synced.
    /// As PostgreSQL's `fsync_fname` does, a folder that cannot be opened for reading (EACCES) or
    /// synced on its file system (EINVAL, EBADF) is taken as synced: there is nothing more to do.
    @discardableResult
    package static func syncFolder(_ folder: String) -> Int32 {
        let fd = open(folder, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == EACCES ? 0 : errno }
        defer { FileIO.close(fd) }
        guard FileIO.fullSync(fd) == 0 else { return errno == EINVAL || errno == EBADF ? 0 : errno }
        return 0
    }

    /// `syncFolder`, where a name must be durable before the caller says it is done: throws
    /// naming `path` and what was `done` when the folder cannot be synced.
    package static func syncFolder(of path: String, after done: String) throws(LogError) {
        let code = syncFolder(folder(of: path))
        guard code == 0 else {
            throw LogError(.writeFailed, path: path, message: "\(done), but its folder cannot be synced to make that durable: \(String(cString: strerror(code)))")
        }
    }
}

extension Timestamp {
    /// `20261121T093000123Z`: a form that sorts and fits in a file name.
    var compactDescription: String {
        description.filter { $0 != "-" && $0 != ":" && $0 != "." }
    }
}

