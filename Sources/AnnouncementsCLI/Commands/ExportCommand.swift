import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

/// `announcements export`: the log's lines into a new file, byte for byte.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy the log (a file or PostgreSQL) into a new log file, byte for byte.",
        discussion: """
            Reads the log the config's `storage:` names (or --log) without taking its writer role, so \
            it may run beside a server: the copy holds every line durable when the read began. It is \
            checked as `verify` checks a log while it is read, and kept only if it verifies (a copy \
            read while an erasure overwrote its lines is taken again). The file is created (never \
            overwritten) and synced; the command prints its head (SEQ:SHA256), which \
            `verify --log FILE` prints too. `import --from FILE` copies it back into a log.
            """
    )

    @OptionGroup var options: LogOptions
    @OptionGroup var chain: CopyChainOptions

    @Option(help: ArgumentHelp("The new log file (it must not exist).", valueName: "file"))
    var to: String

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            guard !to.isEmpty else { throw CLIError(.usage, "--to names the new log file to write, like --to copy.jsonl") }
            let (source, rules) = try options.sourceAndRules()
            // Before the copy's folders are made: a mistyped log leaves nothing behind.
            if case .file(let log) = source { try LogOptions.requireExisting(log, command: "export") }
            let (report, size) = try await VerifiedCopy.make(of: source, to: to, rules: rules, acceptingBrokenChain: chain.acceptBrokenChain)
            let head = report.head?.description ?? "-"
            Output.line("exported \(Output.count(report.events)) events (\(Output.count(Int(size))) bytes) from \(LogLines.name(of: source)) to \(to)\n  head: \(head)")
        }
    }
}
