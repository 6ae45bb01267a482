import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import ArgumentParser
import Logging

/// `announcements import`: a log file's lines into an empty log (a file or PostgreSQL).
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Copy a log file into the configured log, which must be empty, byte for byte.",
        discussion: """
            Verifies FILE first (as `verify` does: a log with problems is refused), holding a \
            shared lock on it (no server may write to it meanwhile; it is only read), then takes \
            the destination's writer role (so no server may run on it), appends FILE's lines in \
            large durable batches, and verifies the destination: it must end at FILE's head. A log \
            file destination is filled through a copy beside it, renamed over it at the end, and a \
            PostgreSQL table in one transaction: an import cut short leaves it empty. The \
            destination is the config's `storage:` (a file or PostgreSQL), or --log.
            """
    )

    @OptionGroup var options: LogOptions

    @Option(help: ArgumentHelp("The log file to copy from.", valueName: "file"))
    var from: String

    /// How many bytes go in one durable append.
    static let batchBytes = 4 << 20

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let configuration = options.log == nil || options.config != nil ? try options.configuration() : Configuration()
            let destination = try options.source(configuration)
            let name = LogLines.name(of: destination)
            // The same file under another spelling (`./log`, a link) too: its locks would take it
            // for another process's.
            if case .file(let path) = destination, path == from || FileIdentity.sameFile(path, from) {
                throw CLIError(.usage, "\(from) is the destination log itself")
            }
            do throws(LogError) {
                // Read under a shared lock: no server may append to it meanwhile, and it needs no write access.
                let sourceLock = try LogReadLock(path: from)
                defer { withExtendedLifetime(sourceLock) {} }
                let source = try await LogLines.verify(.file(from), rules: configuration.rules)
                if let first = source.problems.first {
                    throw LogError(.invalidLine, path: from, message: "it does not verify, so it is not imported (`announcements verify --log` on it lists every problem); the first: \(first)")
                }
                // Sound, but with bytes after its last line (a line being written, or torn by a
                // crash): an import copies whole files. A backup leaves them out.
                if let partial = source.partialTail {
                    throw LogError(.invalidLine, path: from, message: "it ends in \(partial) bytes with no newline, which `verify` ignores but an import would copy. A line whose newline was lost (a copy, an editor: `tail -c \(partial) \(from)` shows it whole): add the newline (printf '\\n' >> \(from)) and import again. A line being written, or torn by a crash: import a copy of the whole lines before it (`announcements export --log \(from) --to COPY` makes one)")
                }
                let end = switch destination {
                case .file(let path): try importFile(into: path, source: source, rules: configuration.rules)
                case .postgres(let settings): try await importRows(into: settings, name: name, source: source, rules: configuration.rules)
                }
                Output.line("imported \(Output.count(source.events)) events (\(Output.count(Int(end))) bytes) from \(from) into \(name)\n  head: \(source.head?.description ?? "-")")
            } catch {
                throw CLIError(error)
            }
        }
    }

    /// Imports into a log file: the copy is written beside it and renamed over it once it verifies
    /// to the source's head, so an import cut short leaves the log empty.
    private func importFile(into path: String, source: VerifyReport, rules: ValidationRules) throws(LogError) -> Int64 {
        let log = try FileLog(path: path)
        defer { log.close() }
        return try log.importLines(of: from, batchBytes: Self.batchBytes) { copy throws(LogError) in
            let copied = try LogReader(path: copy).verify(rules: rules)
            guard copied.isSound, copied.head == source.head else {
                throw LogError(.invalidLine, path: path, message: Self.mismatch(copied, source, from) + "; \(path) is left empty")
            }
        }
    }

    /// Imports into a PostgreSQL table, in one transaction (`PostgresLog.importLines`): a failed
    /// or killed import leaves it empty. Once committed, the rows are checked, still holding the
    /// writer role; a failed check is reported, never answered by deleting them (other nodes
    /// running on the table may have taken them in).
    private func importRows(into settings: PostgresSettings, name: String, source: VerifyReport, rules: ValidationRules) async throws(LogError) -> Int64 {
        let log = try await PostgresLog.open(settings, alone: true, logger: Logger(label: "announcements")).log
        defer { log.close() }
        guard log.durableEnd == 0 else {
            throw LogError(.unusable, path: name, message: "the log is not empty (\(log.durableEnd) bytes): import only into an empty log")
        }
        let end = try log.importLines(of: from, batchBytes: Self.batchBytes)
        let committed = "; the import was committed: check \(name) with `announcements verify` before serving it, and empty it (only if no server ran on it since) to import again"
        let copied: VerifyReport
        do throws(LogError) {
            copied = try await LogLines.verify(.postgres(settings), rules: rules)
        } catch {
            throw LogError(error.kind, path: error.path, line: error.line, message: "cannot check the import: " + error.message + committed)
        }
        guard copied.isSound, copied.head == source.head else {
            throw LogError(.invalidLine, path: name, message: Self.mismatch(copied, source, from) + committed)
        }
        return end
    }

    private static func mismatch(_ copied: VerifyReport, _ source: VerifyReport, _ from: String) -> String {
        "the imported log does not verify to \(from)'s head \(source.head?.description ?? "-"): \(copied.problems.first?.description ?? "its head is \(copied.head?.description ?? "-")")"
    }
}
