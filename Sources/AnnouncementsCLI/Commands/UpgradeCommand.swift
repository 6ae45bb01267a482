import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

/// `announcements upgrade`: rewrite a stopped log file in the current line format.
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Rewrite a log written before erasure existed in the current format (the server must be stopped).",
        discussion: """
            Lines of the first format link into the hash chain by their bytes, text included, so \
            they cannot be erased. This verifies the log, rewrites each such line and every line \
            after the first of them in the current format (a salt for each line's data, "v":3, the \
            chain recomputed), verifies the result and checks that it replays to the same \
            announcements, then replaces the log. The head changes: record the new one. Lines of \
            later formats before them are kept: they can be erased, and are read as they are. A \
            log file only.
            """
    )

    @OptionGroup var options: LogOptions

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let (source, rules) = try options.sourceAndRules()
            guard case .file(let path) = source else {
                throw CLIError(.usage, "upgrade rewrites a log file; a PostgreSQL log is upgraded by exporting it, upgrading the file and importing it into an empty table")
            }
            try LogOptions.requireExisting(path, command: "upgrade")
            let outcome: LogUpgrade.Outcome
            do throws(LogError) {
                outcome = try LogUpgrade.upgrade(path: path, rules: rules)
            } catch {
                throw CLIError(error)
            }
            guard outcome.rewritten > 0 else {
                Output.line("\(path): every line can be erased already (\(Output.count(outcome.events)) events); nothing to do")
                return
            }
            Output.line("""
                \(path): upgraded \(Output.count(outcome.rewritten)) of \(Output.count(outcome.events)) lines; verified before and after
                  old head:  \(outcome.oldHead?.description ?? "-")
                  new head:  \(outcome.newHead?.description ?? "-")
                """)
        }
    }
}
