import AnnouncementsConfig
import AnnouncementsDomain
import ArgumentParser
import Logging

/// `announcements init`: open the log as its writer does, seeding it when empty.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the log and append the config's seed announcements, unless it has events.",
        discussion: """
            Does what a server does when it starts: takes the log's write lock, moves a torn last line \
            aside, and seeds an empty log. A log that has events is never re-seeded.
            """
    )

    @OptionGroup var options: LogOptions
    @OptionGroup var chain: ChainOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in try await initialize() }
    }

    private func initialize() async throws(CLIError) {
        let configuration = try options.configuration()
        logging.bootstrap(configuration)
        let store = try await options.openStore(configuration, logger: Logger(label: "announcements"), chainCheck: chain.chainCheck)
        let model = store.snapshot
        await store.close()
        Output.line("\(store.path): \(Output.count(model.seq, "event")), \(Output.count(model.count, "live announcement"))")
    }
}
