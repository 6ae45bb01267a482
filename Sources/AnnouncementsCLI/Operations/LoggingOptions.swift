import AnnouncementsConfig
import ArgumentParser
import Foundation
import Logging

/// `--log-level` and `--log-format`, for the commands that log as they work (serve, init, erase).
/// A flag wins over `LOG_LEVEL` in the environment, which wins over the config's `log_level` and
/// `log_format`; the default is `info`, as text.
struct LoggingOptions: ParsableArguments {
    @Option(name: .customLong("log-level"), help: ArgumentHelp("The least severe messages logged: \(Self.names(Logger.Level.self)); wins over the config's `log_level`.", valueName: "level"))
    var level: String?

    @Option(name: .customLong("log-format"), help: ArgumentHelp("Log lines as `text` or `json` (one object per line); wins over the config's `log_format`.", valueName: "format"))
    var format: String?

    func validate() throws {
        if let level, Logger.Level(rawValue: level) == nil {
            throw ValidationError("--log-level takes \(Self.names(Logger.Level.self)); got \"\(level)\".")
        }
        if let environment = ProcessInfo.processInfo.environment["LOG_LEVEL"], !environment.isEmpty, Logger.Level(rawValue: environment) == nil {
            throw ValidationError("LOG_LEVEL takes \(Self.names(Logger.Level.self)); got \"\(environment)\".")
        }
        if let format, Configuration.LogFormat(rawValue: format) == nil {
            throw ValidationError("--log-format takes \(Self.names(Configuration.LogFormat.self)); got \"\(format)\".")
        }
    }

    /// Sends log messages to stderr as these options, the environment and `configuration` say.
    func bootstrap(_ configuration: Configuration) {
        let environment = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:))
        let level = level.flatMap(Logger.Level.init(rawValue:)) ?? environment ?? configuration.logLevel
        let format = format.flatMap(Configuration.LogFormat.init(rawValue:)) ?? configuration.logFormat
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, level: level, format: format) }
        // A JSON log's reader takes the error that ends the command from it too.
        if format == .json { Output.logErrors(to: Logger(label: "announcements")) }
    }

    private static func names<Choice: RawRepresentable & CaseIterable>(_: Choice.Type) -> String where Choice.RawValue == String {
        Choice.allCases.map(\.rawValue).joined(separator: ", ")
    }
}
