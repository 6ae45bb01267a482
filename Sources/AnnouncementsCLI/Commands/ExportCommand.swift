import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `announcements export`: the log's lines into a new file, byte for byte.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy the log (a file or PostgreSQL) into a new log file, byte for byte.",
        discussion: """
            Reads the log the config's `storage:` names (or --log) without taking its writer role, so \
            it may run beside a server: the copy holds every line durable when the read began. The \
            file is created (never overwritten) and synced; the command prints its head (SEQ:SHA256), \
            which `verify --log FILE` prints too. `import --from FILE` copies it back into a log.
            """
    )

    @OptionGroup var options: LogOptions

    @Option(help: ArgumentHelp("The new log file (it must not exist).", valueName: "file"))
    var to: String

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let source = try options.source()
            let name = LogLines.name(of: source)
            var count = 0
            var last: (seq: Int, line: [UInt8])?
            let (tail, size) = try await NewFile.create(to) { file throws(LogError) in
                let tail = try await LogLines.read(source) { line throws(LogError) in
                    try file.append(line.bytes)
                    count += 1
                    // The head names the last line's seq, as `verify` prints it.
                    last = (line.seq, Array(line.bytes))
                    return .continue
                }
                return (tail, file.size)
            }
            if let tail { Output.note("\(name): left out \(tail) bytes at the end with no newline (a line being written, or torn by a crash)") }
            let head = last.map { LogHead(seq: $0.seq, hash: LineHash(link: $0.line)).description } ?? "-"
            Output.line("exported \(Output.count(count)) events (\(Output.count(Int(size))) bytes) from \(name) to \(to)\n  head: \(head)")
        }
    }
}

/// A file being written by `export` or `backup`: filled in large writes under a name of its own
/// (`<path>.partial`, created exclusively), synced, and only then given its name, which must not
/// exist. A copy that a crash or a kill interrupts is never found under the name of a finished one.
final class NewFile {
    let path: String
    /// Where the bytes go until the file is finished.
    let partial: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// The bytes the file holds once finished: every byte added so far, written or buffered.
    private(set) var size: Int64 = 0

    /// Creates a file at `path`, has `fill` write it, and syncs it; when anything fails, the file
    /// is removed: no part of it is left behind.
    static func create<Result>(_ path: String, _ fill: (NewFile) async throws(LogError) -> Result) async throws(CLIError) -> Result {
        let file = try NewFile(path: path)
        do throws(LogError) {
            let result = try await fill(file)
            try file.finish()
            return result
        } catch {
            file.remove()
            throw CLIError(error)
        }
    }

    private init(path: String) throws(CLIError) {
        self.path = path
        partial = path + ".partial"
        guard access(path, F_OK) != 0 else { throw Self.exists(path) }
        // Readable by its owner only: it holds every text (as the log does).
        let fd = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == EEXIST {
                throw CLIError(.cantCreate, "\(partial) exists: a copy that was interrupted, or one under way; remove it once no other copy runs")
            }
            throw CLIError(.cantCreate, "\(path): cannot create the file: \(String(cString: strerror(code)))")
        }
        self.fd = fd
        buffer.reserveCapacity(Self.flushAt)
    }

    private static func exists(_ path: String) -> CLIError {
        CLIError(.cantCreate, "\(path) exists: this writes a new file; choose another name or remove it")
    }

    private static func appeared(_ path: String) -> LogError {
        LogError(.writeFailed, path: path, message: "a file of this name appeared while the copy was written; the copy is removed")
    }

    deinit {
        close(fd)
    }

    static let flushAt = 4 << 20

    /// Adds a line (without its newline).
    func append(_ line: ArraySlice<UInt8>) throws(LogError) {
        buffer += line
        buffer.append(UInt8(ascii: "\n"))
        size += Int64(line.count + 1)
        if buffer.count >= Self.flushAt { try flush() }
    }

    /// Adds bytes as they are.
    func add(_ bytes: ArraySlice<UInt8>) throws(LogError) {
        buffer += bytes
        size += Int64(bytes.count)
        if buffer.count >= Self.flushAt { try flush() }
    }

    /// Writes what is buffered, syncs the file, gives it its name (never over a file that appeared
    /// meanwhile: a hard link fails if the name exists) and syncs its folder.
    private func finish() throws(LogError) {
        try flush()
        guard fsync(fd) == 0 else { throw failure("cannot sync the file") }
        if link(partial, path) != 0 {
            guard errno != EEXIST else { throw Self.appeared(path) }
            // A file system without hard links: a rename, after one more look.
            guard access(path, F_OK) != 0 else { throw Self.appeared(path) }
            guard rename(partial, path) == 0 else { throw failure("cannot name the file") }
        }
        unlink(partial)
        FileLog.syncFolder(FileLog.folder(of: path))
    }

    /// Removes the unfinished file after a failure.
    private func remove() {
        unlink(partial)
    }

    private func flush() throws(LogError) {
        var written = 0
        while written < buffer.count {
            let result = buffer[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw failure("cannot write the file") }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private func failure(_ what: String) -> LogError {
        LogError(.writeFailed, path: path, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
