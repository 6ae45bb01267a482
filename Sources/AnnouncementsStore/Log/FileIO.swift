import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole reads and writes at an offset, retrying interrupted and short transfers.
enum FileIO {
    /// Reads exactly `buffer.count` bytes at `offset`: 0, or an errno (EIO for a file that ends first).
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int32 {
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(offset + Int64(done)))
            if got < 0, errno == EINTR { continue }
            if got < 0 { return errno }
            if got == 0 { return EIO }
            done += got
        }
        return 0
    }

    /// Writes all of `bytes` at `offset`: 0, or an errno.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int32 {
        var done = 0
        while done < bytes.count {
            let wrote = pwrite(fd, bytes.baseAddress.map { $0 + done }, bytes.count - done, off_t(offset + Int64(done)))
            if wrote < 0, errno == EINTR { continue }
            if wrote < 0 { return errno }
            if wrote == 0 { return EIO }
            done += wrote
        }
        return 0
    }

    /// Creates the file at `path` (failing if it exists, with `exclusive`; else replacing it) with
    /// `bytes`, synced; `what` names it in errors. The caller syncs the folder when the new name
    /// must be durable. The new file gets the owner, group and permissions of `original` (created
    /// private, then given them): a log's side files and its replacement are as private as the
    /// log, and stay the user's who runs the server on it.
    static func create(_ path: String, with bytes: [UInt8], exclusive: Bool, what: String, like original: String) throws(LogError) {
        let file = try FileWriter(creating: path, exclusive: exclusive, what: what, like: original)
        do throws(LogError) {
            try file.add(bytes)
            try file.finish()
        } catch {
            unlink(path)  // nothing half made is left behind
            throw error
        }
    }

    /// Gives the open file `fd` (at `path`, `what` in errors) the permissions of the file at
    /// `original`, if there is one, and as much of its owner as this process may: its user and
    /// group (as root, or as that user), else its group (as a member), else neither (a writer
    /// who may write the log but does not own it still can make its side files).
    static func give(_ fd: Int32, path: String, what: String, theOwnershipOf original: String) throws(LogError) {
        var model = stat()
        guard stat(original, &model) == 0 else { return }
        if model.st_uid != geteuid() || model.st_gid != getegid(), fchown(fd, model.st_uid, model.st_gid) != 0 {
            _ = fchown(fd, uid_t.max, model.st_gid)  // uid_t.max: (uid_t)-1, the owner unchanged
        }
        guard fchmod(fd, model.st_mode & 0o7777) == 0 else {
            throw LogError.system(.writeFailed, path: path, "cannot give \(what) the permissions of \(original)", errno: errno)
        }
    }

    /// The path of the file `path` names, through any symlinks; `path` itself when that cannot be
    /// told. A copy that replaces a log goes beside this, so that a log's symlink stays one.
    static func resolved(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Takes the lock `operation` (`LOCK_EX` or `LOCK_SH`) on the log `fd` opened, without waiting;
    /// on failure closes `fd` and throws: `.locked` with `message` when a writer holds it.
    static func lockOrClose(_ fd: Int32, _ operation: Int32, path: String, whenHeld message: String) throws(LogError) {
        guard flock(fd, operation | LOCK_NB) != 0 else { return }
        let code = errno
        close(fd)
        if code == EWOULDBLOCK { throw LogError(.locked, path: path, message: message) }
        throw LogError.system(.unreadable, path: path, "cannot lock the log", errno: code)
    }

    /// Which file an open file is: its device and inode.
    struct Identity: Sendable, Hashable {
        var device: dev_t
        var inode: ino_t
    }

    /// The size and identity of an open file; on failure closes `fd` and throws an error naming `path`.
    static func sizeAndIdentityOrClose(_ fd: Int32, path: String) throws(LogError) -> (Int64, Identity) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw LogError.system(.unreadable, path: path, "cannot read the log's size", errno: code)
        }
        return (Int64(info.st_size), Identity(device: info.st_dev, inode: info.st_ino))
    }

    /// The size of an open file; on failure closes `fd` and throws an error naming `path`.
    static func sizeOrClose(_ fd: Int32, path: String) throws(LogError) -> Int64 {
        try sizeAndIdentityOrClose(fd, path: path).0
    }

    /// Makes a file's data and metadata, or a folder's entries, durable: `fsync`, and on Darwin
    /// `F_FULLFSYNC` (the only call there that reaches the disk itself, as the log's syncs do).
    @discardableResult
    static func fullSync(_ fd: Int32) -> Int32 {
        #if canImport(Darwin)
        return FileOperations.system.sync(fd)
        #else
        return fsync(fd)
        #endif
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #elseif canImport(Musl)
        _ = Musl.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }
}
