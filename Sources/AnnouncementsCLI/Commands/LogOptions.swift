import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import ArgumentParser
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `--config` and `--log`: which log a command works on.
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The config file.", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("The log file; wins over the config's `log`.", valueName: "file"))
    var log: String?

    static let defaultConfigPath = "config.yaml"

    func validate() throws {
        for (name, value) in [("--config", config), ("--log", log)] where value?.isEmpty == true {
            throw ValidationError("\(name) takes a file's path, not an empty one")
        }
    }

    /// The configuration: from --config, or ./config.yaml; defaults when only --log is given and
    /// there is no config file.
    func configuration() throws(CLIError) -> Configuration {
        let path = config ?? Self.defaultConfigPath
        if config == nil, log != nil, access(path, F_OK) != 0 {
            return Configuration()
        }
        if config == nil, access(path, F_OK) != 0 {
            throw CLIError(.noInput, "no config.yaml in this folder: pass --config FILE or --log FILE")
        }
        do throws(ConfigError) {
            return try Configuration.load(path: path, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw CLIError(error.isUnreadable ? .noInput : .config, error.description)
        }
    }

    /// Opens the log as its writer (taking its lock or writer role, seeding it when empty, for a
    /// file starting from the snapshot beside it as the config's `snapshot:` says), as `serve` and
    /// `init` do. For `existing` (a command that changes a log, not one that makes it), a log file
    /// must be there already (a mistyped path is an error, not a new log), and an empty log is not seeded.
    /// A log whose hash chain is broken is refused, unless `chainCheck` is `.accept`.
    func openStore(_ configuration: Configuration, logger: Logger, existing: String? = nil, chainCheck: ChainCheck) async throws(CLIError) -> EventStore {
        let seed = existing == nil ? configuration.seed : []
        do {
            switch try source(configuration) {
            case .file(let path):
                if let command = existing { try Self.requireExisting(path, command: command) }
                return try await EventStore.open(
                    path: path, rules: configuration.rules, seed: seed,
                    snapshots: configuration.snapshot.policy, chainCheck: chainCheck, logger: logger
                )
            case .postgres(let settings):
                let (postgresLog, replay) = try await PostgresLog.open(settings, chainCheck: chainCheck, logger: logger)
                logger.info("opened the log in PostgreSQL", metadata: ["log.path": "\(postgresLog.path)", "event.seq": "\(replay.model.seq)"])
                return try await EventStore.open(log: postgresLog, replay: replay, rules: configuration.rules, seed: seed, logger: logger)
            }
        } catch let error as CLIError {
            throw error
        } catch let error as LogError {
            throw CLIError(error)
        } catch let error as StoreError {
            throw CLIError(error)
        } catch {
            throw CLIError(.failure, "\(error)")
        }
    }

    /// Fails with 66 when no file is at `path`: `command` works on an existing log.
    static func requireExisting(_ path: String, command: String) throws(CLIError) {
        guard access(path, F_OK) != 0 else { return }
        throw CLIError(.noInput, "\(path): no such log file (`\(command)` works on an existing log; `init` or `serve` makes one)")
    }

    /// Where a command's log is: a file, or PostgreSQL.
    enum Source {
        case file(String)
        case postgres(PostgresSettings)
    }

    /// The log: --log (a file), or the config's `storage:` (`log:`, or `postgres:`).
    func source(_ configuration: Configuration) throws(CLIError) -> Source {
        if let log { return .file(log) }
        switch configuration.storage {
        case .file: return .file(configuration.logPath)
        case .postgres(let settings): return .postgres(settings)
        }
    }

    /// The log, and the rules its lines are checked against (for a command that reads it, and
    /// needs no other setting): with --log alone no config is read, and the rules are the
    /// defaults; with --config too, the rules are that config's (it must load), the log --log's.
    func sourceAndRules() throws(CLIError) -> (source: Source, rules: ValidationRules) {
        if let log, config == nil { return (.file(log), ValidationRules()) }
        let configuration = try configuration()
        return (try source(configuration), configuration.rules)
    }

    /// `source(_:)` with the configuration read as `configuration()` does: not read for `--log`
    /// alone; with `--config` too, it must load (a mistyped one is an error, not ignored).
    func source() throws(CLIError) -> Source {
        try sourceAndRules().source
    }
}
