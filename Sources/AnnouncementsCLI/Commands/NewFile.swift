import AnnouncementsDomain
import AnnouncementsStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file written by `export` or `backup`: filled under a name of its own (`<path>.partial`,
/// created exclusively), synced, and only then given its name, which must not exist. A copy that a
/// crash or a kill interrupts is never found under the name of a finished one.
enum NewFile {
    /// Creates a file at `path` (and the folders it is in, as `backup` makes its folder), has
    /// `fill` write it, and syncs it; when anything fails, or an interrupt ends the process before
    /// it is named (`Interruption`), the file is removed: no part of it is left behind (the
    /// folders it made stay, empty). A file `keep` refuses, from what `fill` returned (a copy
    /// that does not verify), is removed before it is ever named. A file that cannot be created
    /// is named as the user named it.
    static func create<Result>(
        _ path: String, keepingIf keep: (Result) -> Bool = { _ in true }, _ fill: (FileWriter) async throws(LogError) -> Result
    ) async throws(CLIError) -> Result {
        guard !path.hasSuffix("/") else {
            throw CLIError(.cantCreate, "\(path) names a folder: name the file to write in it, like \(path)announcements.jsonl")
        }
        let partial = path + ".partial"
        guard access(path, F_OK) != 0 else { throw exists(path) }
        guard access(partial, F_OK) != 0 else {
            throw CLIError(.cantCreate, "\(partial) exists: a copy that was interrupted, or one under way; remove it once no other copy runs")
        }
        let made = FileLog.makeFolders(FileLog.folder(of: path))
        guard made.error == 0 else {
            throw CLIError(.cantCreate, "\(path): \(FileLog.folderProblem(made))")
        }
        // Made with its cleanup: a failure, or an interrupt, from then on removes it.
        return try await Interruption.cleaningUp(after: { () throws(CLIError) in try Self.create(partial, for: path) }, with: { unlink(partial) }) { file async throws(CLIError) in
            do throws(LogError) {
                let result = try await fill(file)
                try file.finish()
                if keep(result) {
                    try name(partial, path)
                } else {
                    unlink(partial)
                }
                return result
            } catch {
                throw CLIError(error)
            }
        }
    }

    /// A new file at `partial`, the copy that will be named `path`.
    private static func create(_ partial: String, for path: String) throws(CLIError) -> sending FileWriter {
        do throws(LogError) { return try FileWriter(creating: partial, exclusive: true, what: "the copy") } catch {
            throw CLIError(.cantCreate, "\(path): \(error.message)")
        }
    }

    /// Gives the finished file at `partial` its name `path` (never over a file that appeared
    /// meanwhile: a hard link fails if the name exists), and syncs its folder.
    private static func name(_ partial: String, _ path: String) throws(LogError) {
        if link(partial, path) != 0 {
            guard errno != EEXIST else { throw appeared(path) }
            // A file system without hard links: a rename, after one more look.
            guard access(path, F_OK) != 0 else { throw appeared(path) }
            guard rename(partial, path) == 0 else {
                throw LogError(.writeFailed, path: path, message: "cannot name the copy: \(String(cString: strerror(errno)))")
            }
        }
        unlink(partial)
        try FileLog.syncFolder(of: path, after: "the copy is made")
    }

    private static func exists(_ path: String) -> CLIError {
        CLIError(.cantCreate, "\(path) exists: this writes a new file; choose another name or remove it")
    }

    private static func appeared(_ path: String) -> LogError {
        LogError(.writeFailed, path: path, message: "a file of this name appeared while the copy was written; the copy is removed")
    }
}
