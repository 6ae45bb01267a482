import AnnouncementsClient
import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser
import Foundation
import Logging

/// `announcements erase ID --reason TEXT`: erase an announcement's texts from a stopped log, or
/// through a running server (`--server`).
struct EraseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "erase",
        abstract: "Erase every title and body an announcement ever had from the log: a stopped one, or through a running server (--server).",
        discussion: """
            Appends an `erased` event (who, when, the reason), then overwrites each earlier line of \
            the announcement with its sealed form: its skeleton (seq, type, time, writer) and the \
            digest of its data stay, and the hash chain still proves every line. Deletes the \
            snapshot, and torn lines set aside beside the log that hold the texts. With --server, \
            a running server does it (POST /announcements/{id}/erase), with an admin's token \
            (--token, default $ANNOUNCEMENTS_TOKEN), whose name it records as the writer; \
            $ANNOUNCEMENTS_SERVER alone does not send an erasure to a server. An erasure that had \
            been interrupted (its event written, its lines not overwritten) is finished, said so, \
            exit 0; one complete already is exit 1.
            """
    )

    @Argument(help: "The announcement's id (live or deleted).") var id: Int
    @Option(help: ArgumentHelp("Why its texts go: recorded in the erased event.", valueName: "text")) var reason: String
    @Option(help: ArgumentHelp("Who erases: the erased event's `by` (default: $USER, or `operator` when it is unset).", valueName: "name")) var by: String?
    @OptionGroup var options: LogOptions
    @OptionGroup var chain: ChainOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var remote: ServerOptions<NamedServer>

    func validate() throws {
        try AnnouncementID.check(id)
        guard remote.server != nil else {
            if remote.token != nil || remote.timeout != nil { throw ValidationError("--token and --timeout go with --server (erasing through a running server).") }
            return
        }
        let local = [
            ("--log", options.log != nil), ("--config", options.config != nil), ("--by", by != nil),
            ("--accept-broken-chain", chain.acceptBrokenChain), ("--log-level", logging.level != nil), ("--log-format", logging.format != nil),
        ].filter(\.1).map(\.0)
        if let first = local.first {
            throw ValidationError("\(first) is for a stopped log; with --server, the server erases (its token's name is the writer).")
        }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            if remote.server != nil { try await eraseThroughServer() } else { try await erase() }
        }
    }

    /// `--server`: the running server erases it.
    private func eraseThroughServer() async throws(CLIError) {
        if let problem = ValidationRules.problem(reason: reason) { throw CLIError(.usage, "--reason \(problem)") }
        let client = try remote.client()
        let erasure = try await request(writing: true) { () async throws(ClientError) in try await client.erase(id: id, reason: reason) }
        if erasure.finishedEarlier {
            Output.line(Self.finished(id: id, seq: erasure.seq, sealed: erasure.sealedLines))
        } else {
            Output.line("erased announcement \(id): event \(erasure.seq); \(Self.sealed(erasure.sealedLines))")
        }
    }

    private func erase() async throws(CLIError) {
        if let problem = ValidationRules.problem(reason: reason) { throw CLIError(.usage, "--reason \(problem)") }
        let writer = by ?? ProcessInfo.processInfo.environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "operator"
        if let problem = ValidationRules.problem(writer: writer) { throw CLIError(.usage, "--by \(problem)") }
        guard writer != "seed" else { throw CLIError(.usage, "--by must not be `seed`, the seed data's writer") }
        let configuration = try options.configuration()
        logging.bootstrap(configuration)
        let store: EventStore
        do {
            store = try await options.openStore(configuration, logger: Logger(label: "announcements"), existing: "erase", chainCheck: chain.chainCheck)
        } catch {
            guard error.code == .tempFail else { throw error }
            throw CLIError(.tempFail, error.message + "; or erase through the server that holds it: announcements erase \(id) --reason TEXT --server URL (an admin's token)")
        }
        let erasure: EventStore.Erasure
        do throws(StoreError) {
            erasure = try await store.erase(id: id, by: writer, reason: reason)
        } catch {
            let finished = store.erasureFinishedAtOpen(id: id)
            await store.close()
            if case .erased(_, let seq) = error, let finished {
                // Erased before, interrupted by a crash, finished by this open: what was asked for is done.
                Output.line(Self.finished(id: id, seq: seq, sealed: finished))
                return
            }
            throw CLIError(error)
        }
        await store.close()
        if erasure.finishedEarlier {
            Output.line(Self.finished(id: id, seq: erasure.seq, sealed: erasure.sealedLines))
        } else {
            Output.line("erased announcement \(id): event \(erasure.seq) by \(VisibleText.escaped(writer)); \(Self.sealed(erasure.sealedLines))")
        }
    }

    /// An erasure asked for again, which finished an earlier one whose overwrite had not run.
    private static func finished(id: Int, seq: Int, sealed: [Int]) -> String {
        "announcement \(id) was erased already (event \(seq)), but its erasure had been interrupted: finished it; \(Self.sealed(sealed))"
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
