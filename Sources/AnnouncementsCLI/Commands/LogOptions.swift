import AnnouncementsConfig
import AnnouncementsDomain
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
            throw CLIError(.config, error.description)
        }
    }

    /// Opens the log as its writer (taking its lock, seeding it when empty, starting from the
    /// snapshot beside it as the config's `snapshot:` says), as `serve` and `init` do.
    func openStore(_ configuration: Configuration, logger: Logger) async throws(CLIError) -> EventStore {
        do {
            return try await EventStore.open(
                path: log ?? configuration.logPath, rules: configuration.rules, seed: configuration.seed,
                snapshots: configuration.snapshot.policy, logger: logger
            )
        } catch {
            throw CLIError(error)
        }
    }

    /// The log's path: --log, or the config's `log`.
    func logPath() throws(CLIError) -> String {
        if let log { return log }
        return try configuration().logPath
    }
}
