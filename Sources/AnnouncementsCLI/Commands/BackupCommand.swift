import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `announcements backup DEST`: a consistent, verified copy of the log (and its snapshot), taken
/// while a server writes.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a consistent, verified prefix of the log (and its snapshot) into a folder, while a server runs.",
        discussion: """
            Never stops writers: it reads the log file without taking its writer role, copying every \
            complete line there when the read began, and checks the copy as `verify` does while it \
            reads (a copy that does not verify is not kept). The snapshot beside the log, if any, is \
            copied first, so it never covers more than the copied log. Writes DEST/NAME, \
            DEST/NAME.snapshot and DEST/NAME.head (the head, SEQ:SHA256), and prints the head. \
            DEST must be new, or an empty folder. For a log in PostgreSQL, use PostgreSQL's own backups \
            (pg_dump, or a base backup), or `announcements export`.
            """
    )

    @OptionGroup var options: LogOptions
    @OptionGroup var chain: CopyChainOptions

    @Argument(help: ArgumentHelp("The folder to write the backup into (made; it must be new, or an empty folder).", valueName: "dest"))
    var destination: String

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let (source, rules) = try options.sourceAndRules()
            guard case .file(let log) = source else {
                throw CLIError(.usage, "backup copies a log file; this config keeps the log in PostgreSQL: use PostgreSQL's backups (pg_dump, or a base backup), or `announcements export --to FILE`")
            }
            // Before the folder is made: a mistyped log leaves nothing behind.
            try LogOptions.requireExisting(log, command: "backup")
            let (folder, madeFolder) = try Self.prepare(folder: destination)
            let name = String(log.split(separator: "/").last ?? "announcements.jsonl")
            let target = folder + "/" + name
            // Whatever fails, an interrupt too, no part of a backup is left behind (a second try
            // needs the folder empty, and it was), nor the folder when this backup made it.
            let files = [target, target + ".head", SnapshotFile.path(forLog: target)]
            let cleanup: @Sendable () -> Void = {
                for file in files { unlink(file) }
                if madeFolder { rmdir(folder) }
            }
            let done = try await Interruption.cleaningUp(with: cleanup) { () async throws(CLIError) in
                try await Self.copy(log, to: target, rules: rules, acceptingBrokenChain: chain.acceptBrokenChain)
            }
            // Said once an interrupt can no longer remove it.
            Output.line(done)
        }
    }

    /// Copies the snapshot beside `log`, then `log`, to `target` and its snapshot, then writes the
    /// head (a file written last: a backup without it was not finished). Returns what to say.
    private static func copy(_ log: String, to target: String, rules: ValidationRules, acceptingBrokenChain: Bool) async throws(CLIError) -> String {
        let copiedSnapshot = try await Self.copySnapshot(of: log, to: SnapshotFile.path(forLog: target))
        let report = try await VerifiedCopy.make(of: .file(log), to: target, rules: rules, acceptingBrokenChain: acceptingBrokenChain).report
        // An erasure deletes the snapshot before it seals the log: a snapshot that is gone or
        // replaced since it was copied may hold texts the copied log no longer has.
        var snapshot = copiedSnapshot != nil
        if let copiedSnapshot, FileIdentity(path: SnapshotFile.path(forLog: log)) != copiedSnapshot {
            unlink(SnapshotFile.path(forLog: target))
            snapshot = false
            Output.note("\(log): the snapshot changed while the log was copied (a new one, or an erasure); the backup has none (start-up from it replays the whole log)")
        } else if snapshot, let reason = Self.leftOut(snapshotAt: SnapshotFile.path(forLog: target), besideLog: target, erasure: report.lastErasureSeq) {
            unlink(SnapshotFile.path(forLog: target))
            snapshot = false
            Output.note("\(log): the snapshot beside it \(reason); the backup has none (start-up from it replays the whole log)")
        }
        let head = report.head?.description ?? "-"
        if report.head == nil {
            // Nothing to record: a head file must be `SEQ:SHA256` (start-up refuses a log beside
            // one it cannot read), and a restore of an empty log has nothing to prove.
            Output.note("\(log): the log is empty: the backup has no head file")
        } else {
            try await NewFile.create(target + ".head") { file throws(LogError) in try file.add((head + "\n").utf8) }
        }
        return """
            backed up \(log) to \(target): \(Output.count(report.events, "event")), \(Output.count(report.live, "live announcement"))\(snapshot ? ", with its snapshot" : "")
              head: \(head)
            """
    }

    /// Why the snapshot copied to `path`, beside the copied log `log`, is left out of the backup,
    /// if it is: one this version cannot read (another version's, or damaged: its contents are
    /// read whole, their checksum checked), or that covers lines `log` lacks, is of no use to a
    /// start from the backup, and
    /// one that covers less of the log than its last erasure (`erasure`) was taken before it (a
    /// copy put back, one beside another path to the log) and may hold the erased texts.
    private static func leftOut(snapshotAt path: String, besideLog log: String, erasure: Int?) -> String? {
        let covered: Int
        switch SnapshotFile.checkedCoveredSeq(ofSnapshotAt: path) {
        case .success(let seq): covered = seq
        case .failure(let problem): return "is not one this version reads (another version's, or damaged: \(problem))"
        }
        // The log's own check (before its copy) makes this one hold; a start from the backup
        // would refuse a snapshot that covers lines its log lacks.
        guard (try? SnapshotFile.checkCoveredLines(besideLog: log)) != nil else {
            return "covers the log up to seq \(covered), which the copied log does not hold as the snapshot knew it"
        }
        guard let erasure, covered < erasure else { return nil }
        return "covers the log up to seq \(covered), before the erasure at seq \(erasure), and may hold the erased texts"
    }

    /// Creates `folder` (only its owner may enter it: a backup holds every text) and the folders it
    /// is in, durably (a power loss after "backed up" must not take the folder with it), or checks
    /// that it is an empty one. Returns it as named without a trailing slash.
    /// The folder, and whether this made it (not the folders above it).
    private static func prepare(folder given: String) throws(CLIError) -> (folder: String, made: Bool) {
        let files = FileManager.default
        guard !given.isEmpty else { throw CLIError(.usage, "name the folder to write the backup into (`announcements backup DEST`)") }
        // `backups/today/` names the folder `backups/today`, made here with its own permissions.
        var folder = given
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        let parent = FileLog.folder(of: folder)
        let above = FileLog.makeFolders(parent)
        guard above.error == 0 else {
            throw CLIError(.cantCreate, "\(given): \(FileLog.folderProblem(above))")
        }
        // Made if missing (a folder there already is kept as it is), then found empty: no other
        // process can slip files in between a check and the creation.
        let made = mkdir(folder, 0o700) == 0
        if made {
            FileLog.syncFolder(parent)
        } else if errno != EEXIST {
            throw CLIError(.cantCreate, "\(folder): cannot create the folder: \(String(cString: strerror(errno)))")
        } else {
            var isFolder: ObjCBool = false
            if files.fileExists(atPath: folder, isDirectory: &isFolder), !isFolder.boolValue {
                throw CLIError(.cantCreate, "\(folder) is a file, not a folder: a backup goes into a new or empty folder")
            }
        }
        do {
            if let first = try files.contentsOfDirectory(atPath: folder).sorted().first {
                let left = first.hasSuffix(".partial") ? ", left by a backup that was killed or crashed: remove the folder's files once no other backup writes there" : ""
                throw CLIError(.cantCreate, "\(folder) is not empty (it holds \(first)\(left)): a backup goes into a new or empty folder")
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.cantCreate, "\(folder): cannot create the folder, or read it: \((error as NSError).localizedDescription)")
        }
        return (folder, made)
    }

    /// Copies the snapshot beside `log` (renamed into place whole by the server, so any one read is
    /// consistent) to `target`; returns which file it copied, nil when there is none. One that
    /// cannot be read is left out with a note, as one this version cannot use is (`leftOut`): the
    /// log is what a backup must hold. (A copy that cannot be written fails the backup.)
    private static func copySnapshot(of log: String, to target: String) async throws(CLIError) -> FileIdentity? {
        let source = SnapshotFile.path(forLog: log)
        func leftOut(_ code: Int32) -> FileIdentity? {
            Output.note("\(source): cannot read the snapshot (\(String(cString: strerror(code)))); the backup has none (start-up from it replays the whole log)")
            return nil
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            let code = errno
            return code == ENOENT ? nil : leftOut(code)
        }
        defer { close(input) }
        var readFailure: Int32?
        do throws(CLIError) {
            return try await NewFile.create(target) { file throws(LogError) in
                guard let identity = FileIdentity(descriptor: input) else {
                    readFailure = errno
                    throw LogError(.unreadable, path: source, message: "cannot read the snapshot")
                }
                var buffer = [UInt8](repeating: 0, count: 1 << 20)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                    if count < 0, errno == EINTR { continue }
                    guard count >= 0 else {
                        readFailure = errno
                        throw LogError(.unreadable, path: source, message: "cannot read the snapshot")
                    }
                    if count == 0 { return identity }
                    try file.add(buffer[..<count])
                }
            }
        } catch {
            guard let readFailure else { throw error }
            return leftOut(readFailure)
        }
    }
}

/// Which file a path names, and its size and last change: what tells that a file was replaced or
/// changed between two looks.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    /// The last change, in seconds and nanoseconds apart (as one count of nanoseconds, a time past
    /// 2262 or before 1677, which a file can be given, would overflow).
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64

    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }

    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// Whether the paths name one file (links followed); false when either is missing.
    static func sameFile(_ one: String, _ other: String) -> Bool {
        guard let one = FileIdentity(path: one), let other = FileIdentity(path: other) else { return false }
        return one.device == other.device && one.inode == other.inode
    }

    private init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
        (modifiedSeconds, modifiedNanoseconds) = (Int64(status.st_mtimespec.tv_sec), Int64(status.st_mtimespec.tv_nsec))
        #else
        (modifiedSeconds, modifiedNanoseconds) = (Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec))
        #endif
    }
}
