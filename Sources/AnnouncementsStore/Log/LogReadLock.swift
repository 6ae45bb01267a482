import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A log file held open for reading under a shared lock, until released: no writer can run on it
/// meanwhile (a server, `import`, `erase` and `upgrade` take the lock exclusively), and other
/// readers still can. Needs no write access to the file, and changes nothing in it or beside it.
public final class LogReadLock: Sendable {
    private let fd: Int32

    public init(path: String) throws(LogError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LogError.system(.unreadable, path: path, "cannot open the log", errno: errno) }
        try FileIO.lockOrClose(fd, LOCK_SH, path: path, whenHeld: "another process is writing to this log (it holds the write lock): stop it, then try again")
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        FileIO.close(fd)
    }
}
