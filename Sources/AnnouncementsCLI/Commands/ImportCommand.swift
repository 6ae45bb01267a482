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
            let configuration = options.log == nil ? try options.configuration() : Configuration()
            let destination = try options.source(configuration)
            let name = LogLines.name(of: destination)
            if case .file(let path) = destination, path == from {
                throw CLIError(.usage, "\(from) is the destination log itself")
            }
            do throws(LogError) {
                // Read under a shared lock: no server may append to it meanwhile, and it needs no write access.
                let sourceLock = try LogReadLock(path: from)
                defer { withExtendedLifetime(sourceLock) {} }
                let source = try await LogLines.verify(.file(from), rules: configuration.rules)
                guard source.isSound, source.partialTail == nil else {
                    let first = source.problems.first?.description ?? "\(from): \(source.partialTail ?? 0) bytes at the end with no newline"
                    throw LogError(.invalidLine, path: from, message: "\(from) does not verify, so it is not imported (run `announcements verify --log \(from)`): \(first)")
                }
                let end = switch destination {
                case .file(let path): try importFile(into: path, source: source, rules: configuration.rules)
                case .postgres: try await importRows(into: destination, name: name, source: source, rules: configuration.rules)
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

    /// Imports into a PostgreSQL table, emptied again when the import fails. The copy is verified
    /// while this process still holds the writer role: a server on the table cannot append
    /// before it is known good, and what a failed check empties is only what the import wrote.
    private func importRows(into destination: LogOptions.Source, name: String, source: VerifyReport, rules: ValidationRules) async throws(LogError) -> Int64 {
        let log = try await openEmpty(destination, name: name)
        defer { log.close() }
        let end: Int64
        let copied: VerifyReport
        do throws(LogError) {
            // One transaction: a killed import leaves the table empty, not a prefix.
            if let table = log as? PostgresLog {
                end = try table.importLines(of: from, batchBytes: Self.batchBytes)
            } else {
                end = try log.append(linesOf: from, batchBytes: Self.batchBytes)
            }
            copied = try await LogLines.verify(destination, rules: rules)
        } catch {
            // The destination was empty: leave it so, for the import to be run again.
            throw LogError(error.kind, path: error.path, line: error.line, message: error.message + discard(log, name: name))
        }
        guard copied.isSound, copied.head == source.head else {
            throw LogError(.invalidLine, path: name, message: Self.mismatch(copied, source, from) + discard(log, name: name))
        }
        return end
    }

    private static func mismatch(_ copied: VerifyReport, _ source: VerifyReport, _ from: String) -> String {
        "the imported log does not verify to \(from)'s head \(source.head?.description ?? "-"): \(copied.problems.first?.description ?? "its head is \(copied.head?.description ?? "-")")"
    }

    /// Empties the destination an import failed to fill; returns what to add to the error's
    /// message: that it was emptied, or that it holds a partial copy and what to do.
    private func discard(_ log: any EventLog, name: String) -> String {
        do throws(LogError) {
            try log.removeAll()
            return "; \(name) was emptied again"
        } catch {
            return "; \(name) holds a partial copy and could not be emptied (\(error.message)): empty it before importing again"
        }
    }

    /// The destination opened as its writer.
    private func openWriter(_ destination: LogOptions.Source) async throws(LogError) -> any EventLog {
        switch destination {
        case .file(let path): try FileLog(path: path)
        case .postgres(let settings): try await PostgresLog.open(settings, alone: true, logger: Logger(label: "announcements")).log
        }
    }

    /// The destination opened as its writer; refused unless it is empty.
    private func openEmpty(_ destination: LogOptions.Source, name: String) async throws(LogError) -> any EventLog {
        let log = try await openWriter(destination)
        guard log.durableEnd == 0 else {
            log.close()
            throw LogError(.unusable, path: name, message: "the log is not empty (\(log.durableEnd) bytes): import only into an empty log")
        }
        return log
    }
}
