import ArgumentParser
import Foundation
import Logging

/// `announcements`: the event-sourced announcement store's command line.
@main
struct Announcements: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announcements",
        abstract: "An event-sourced announcement store: serve it, and replay, audit and verify its log.",
        discussion: """
            Every command reads the log named by --log, or by the `log` key of --config \
            (default ./config.yaml). Read-only commands never write and may run while a server writes.
            """,
        subcommands: [ServeCommand.self, InitCommand.self, ReplayCommand.self, HistoryCommand.self, VerifyCommand.self]
    )
}

extension Announcements {
    /// Sends log messages to stderr, at the level `LOG_LEVEL` names (default `info`).
    static func bootstrapLogging() {
        let level = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
