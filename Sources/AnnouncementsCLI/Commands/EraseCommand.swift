import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser
import Foundation
import Logging

/// `announcements erase ID --reason TEXT`: erase an announcement's texts from a stopped log.
struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase every title and body an announcement ever had from the log (the server must be stopped).",
        discussion: """
            Appends an `erased` event (who, when, the reason), then overwrites each earlier line of \
            the announcement with its sealed form: its skeleton (seq, type, time, writer) and the \
            digest of its data stay, and the hash chain still proves every line. Deletes the \
            snapshot, and torn lines set aside beside the log that hold the texts. A running \
            server does the same through POST /announcements/{id}/erase (an admin's token).
            """
    )

    @Argument(help: "The announcement's id (live or deleted).") var id: Int
    @Option(help: ArgumentHelp("Why its texts go: recorded in the erased event.", valueName: "text")) var reason: String
    @Option(help: ArgumentHelp("Who erases: the erased event's `by` (default: $USER, or `operator` when it is unset).", valueName: "name")) var by: String?
    @OptionGroup var options: LogOptions
    @OptionGroup var chain: ChainOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in try await erase() }
    }

    private func erase() async throws(CLIError) {
        if let problem = ValidationRules.problem(reason: reason) { throw CLIError(.usage, "--reason \(problem)") }
        let writer = by ?? ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "operator"
        if let problem = ValidationRules.problem(writer: writer) { throw CLIError(.usage, "--by \(problem)") }
        guard writer != "seed" else { throw CLIError(.usage, "--by must not be `seed`, the seed data's writer") }
        let configuration = try options.configuration()
        logging.bootstrap(configuration)
        let store = try await options.openStore(configuration, logger: Logger(label: "announcements"), existing: "erase", chainCheck: chain.chainCheck)
        let erasure: EventStore.Erasure
        do throws(StoreError) {
            erasure = try await store.erase(id: id, by: writer, reason: reason)
        } catch {
            let finished = store.erasureFinishedAtOpen(id: id)
            await store.close()
            if case .erased(_, let seq) = error, let finished {
                // Erased before, interrupted (by a crash or a failure), finished now: what was asked for is done.
                Output.line("announcement \(id) was erased already (event \(seq)), but its erasure had been interrupted: finished it; \(Self.sealed(finished))")
                return
            }
            throw CLIError(error)
        }
        await store.close()
        Output.line("erased announcement \(id): event \(erasure.seq) by \(VisibleText.escaped(writer)); \(Self.sealed(erasure.sealedLines))")
    }

    private static func sealed(_ seqs: [Int]) -> String {
        let lines = seqs.map(String.init).joined(separator: ", ")
        return switch seqs.count {
        case 0: "no line left to seal"
        case 1: "sealed line \(lines)"
        default: "sealed lines \(lines)"
        }
    }
}
