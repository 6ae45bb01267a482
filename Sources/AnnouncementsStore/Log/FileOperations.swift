import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls the log's writer makes, as values, so that tests can make a write or a sync fail
/// the way a full disk or a failing device would.
struct FileOperations: Sendable {
    /// `pwrite(2)`: bytes written, or -1 with `errno` set.
    var write: @Sendable (_ fd: Int32, _ bytes: UnsafeRawBufferPointer, _ offset: Int64) -> Int
    /// A durable flush of the file's data: 0, or -1 with `errno` set.
    var sync: @Sendable (_ fd: Int32) -> Int32
    /// Makes the names in a folder durable (`FileLog.syncFolder`): 0, or an errno.
    var syncFolder: @Sendable (_ folder: String) -> Int32 = { FileLog.syncFolder($0) }

    /// The system's calls, except that a sync for which `fails()` is true fails with EIO, the way a
    /// failing device's does (the store's undo syncs too: `fails()` decides for each).
    static func withFailingSync(when fails: @escaping @Sendable () -> Bool) -> FileOperations {
        var operations = FileOperations.system
        operations.sync = { fd in
            guard fails() else { return FileOperations.system.sync(fd) }
            errno = EIO
            return -1
        }
        return operations
    }

    /// The system's calls, except that a folder's sync for which `fails()` is true fails with EIO.
    static func withFailingFolderSync(when fails: @escaping @Sendable () -> Bool) -> FileOperations {
        var operations = FileOperations.system
        operations.syncFolder = { folder in fails() ? EIO : FileLog.syncFolder(folder) }
        return operations
    }

    static let system = FileOperations(
        write: { fd, bytes, offset in pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset)) },
        sync: { fd in
            #if canImport(Darwin)
            // On Darwin only F_FULLFSYNC reaches the disk itself. Fall back to fsync only where the
            // file system does not support it, never after a real I/O error.
            if fcntl(fd, F_FULLFSYNC) == 0 { return 0 }
            guard errno == ENOTSUP || errno == EINVAL || errno == ENOTTY else { return -1 }
            return fsync(fd)
            #else
            return fdatasync(fd)
            #endif
        }
    )
}
