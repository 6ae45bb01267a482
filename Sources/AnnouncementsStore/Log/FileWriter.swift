import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file written front to back in large writes: what is added gathers in `buffer` and is
/// written once the buffer holds `flushAt` bytes; `finish` writes the rest and syncs the file.
/// What a copy, an export, a backup or an upgraded log is written through. Owns its descriptor.
public final class FileWriter {
    public let path: String
    /// Names the file in errors ("the upgraded log").
    private let what: String
    private let fd: Int32
    /// Bytes added and not yet written. Encoders may write into it directly, then call `added()`.
    public var buffer: [UInt8] = []
    private var written: Int64 = 0
    /// The file's size once finished: every byte added so far, written or buffered.
    public var size: Int64 { written + Int64(buffer.count) }

    static let flushAt = 4 << 20

    /// Creates the file at `path`, readable and writable by its owner only (it holds texts, as
    /// the log does); with `exclusive`, failing if it exists (EEXIST, for the caller to explain),
    /// else emptying it. `like` gives it that file's owner and permissions (`FileIO.give`).
    public init(creating path: String, exclusive: Bool, what: String, like original: String? = nil) throws(LogError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT {
                throw LogError(.writeFailed, path: path, message: "cannot create \(what): its folder \(FileLog.folder(of: path)) does not exist")
            }
            throw LogError.system(.writeFailed, path: path, "cannot create \(what)", errno: code)
        }
        self.path = path
        self.what = what
        self.fd = fd
        if let original {
            do throws(LogError) { try FileIO.give(fd, path: path, what: what, theOwnershipOf: original) } catch {
                unlink(path)
                throw error
            }
        }
    }

    deinit {
        FileIO.close(fd)
    }

    /// Adds a line and its newline.
    public func append(line: some Collection<UInt8>) throws(LogError) {
        buffer.append(contentsOf: line)
        buffer.append(UInt8(ascii: "\n"))
        try added()
    }

    /// Adds bytes as they are.
    public func add(_ bytes: some Collection<UInt8>) throws(LogError) {
        buffer.append(contentsOf: bytes)
        try added()
    }

    /// Writes the buffer out once it is full: to call after writing into `buffer` directly.
    public func added() throws(LogError) {
        if buffer.count >= Self.flushAt { try flush() }
    }

    /// Writes what is left and syncs the file.
    public func finish() throws(LogError) {
        try flush()
        guard FileIO.fullSync(fd) == 0 else { throw LogError.system(.writeFailed, path: path, "cannot sync \(what)", errno: errno) }
    }

    private func flush() throws(LogError) {
        let error = buffer.withUnsafeBytes { FileIO.write(fd, $0, at: written) }
        guard error == 0 else { throw LogError.system(.writeFailed, path: path, "cannot write \(what)", errno: error) }
        written += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }
}
