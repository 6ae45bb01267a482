import ArgumentParser

/// `announcements`: the event-sourced announcement store's command line.
@main
struct Announcements: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announcements",
        abstract: "An event-sourced announcement store: replay, audit and verify its log.",
        discussion: """
            Every command reads the log named by --log, or by the `log` key of --config \
            (default ./config.yaml). Read-only commands never write and may run while a server writes.
            """,
        subcommands: [ReplayCommand.self, HistoryCommand.self, VerifyCommand.self]
    )
}
