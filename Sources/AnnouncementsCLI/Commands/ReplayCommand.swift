import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import ArgumentParser
import Logging

/// `announcements replay`: rebuild the state from the log and print it.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild the announcements from the log and print them.",
        discussion: """
            Starts from the snapshot beside the log (LOG.snapshot, written by the server) when the log \
            still holds the line it covers last, and replays only the lines after it; the result is the \
            same as from the whole log. --no-snapshot, --until and --as-of read the whole log.
            With --until or --as-of, rebuild them as they were at that point (without those erased \
            since: their texts are gone).
            """
    )

    @OptionGroup var options: LogOptions

    @Option(help: ArgumentHelp("Stop after the event with this seq.", valueName: "seq"))
    var until: Int?

    @Option(name: .customLong("as-of"), help: ArgumentHelp("Stop after the last event at or before this RFC 3339 time.", valueName: "time"))
    var asOf: String?

    @Flag(name: .customLong("no-snapshot"), help: "Read the whole log, ignoring the snapshot beside it.")
    var noSnapshot = false

    @Option(help: "Output format: table or json.")
    var format: Format = .table

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    func validate() throws {
        if until != nil, asOf != nil { throw ValidationError("Use --until or --as-of, not both.") }
        if let until, until < 0 { throw ValidationError("--until takes a seq: 0 or more.") }
        if let asOf, Timestamp(rfc3339: asOf) == nil {
            throw ValidationError("--as-of takes an RFC 3339 time, like 2026-11-21T09:30:00Z; got \"\(asOf)\".")
        }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let bound: ReplayBound? = until.map(ReplayBound.seq) ?? asOf.flatMap(Timestamp.init(rfc3339:)).map(ReplayBound.time)
            let source = try options.source()
            let path: String
            let replay: Replay
            // Erased after the bound: an erasure a crash interrupted has not sealed its lines yet,
            // and only its erased event, later in the log, says that their texts are gone.
            var erasedLater: Set<Int> = []
            do throws(LogError) {
                switch source {
                case .postgres(let settings):
                    path = settings.description
                    replay = try await PostgresLog.replay(settings, until: bound, logger: Logger(label: "announcements"))
                case .file(let file) where bound == nil && !noSnapshot:
                    path = file
                    let result = try LogReader(path: path).replayUsingSnapshot(progress: Output.progress(label: "replaying"))
                    replay = result.replay
                    let use = result.snapshot
                    if let seq = use.seq {
                        Output.note("\(path): started from the snapshot at seq \(seq), replayed \(Output.count(use.tail)) lines after it")
                    } else if let problem = use.problem, use.reason != "missing" {
                        Output.note("\(path): did not use the snapshot (\(problem)); replayed the whole log")
                    }
                case .file(let file):
                    path = file
                    replay = try LogReader(path: path).replay(until: bound, progress: Output.progress(label: "replaying"))
                }
                if bound != nil {
                    // Read leniently: a line after the bound that does not parse (damaged, or of
                    // a newer version) is not this past state's to refuse.
                    erasedLater = try await LogLines.erasedIDs(source)
                }
            } catch {
                throw CLIError(error)
            }
            if let torn = replay.tornTail {
                Output.note("\(path):\(torn.line): ignored \(torn.count) bytes at the end: \(TornTail.reason) (a line being written, or torn by a crash)")
            }
            // A past state leaves out what was erased since (its erased event may come after the bound).
            let model = bound == nil ? replay.model : replay.modelWithoutErased(erasedLater: erasedLater)
            switch format {
            case .json: Output.line(Self.json(model))
            case .table: Output.line(Self.table(model, path: path))
            }
        }
    }

    static func json(_ model: ReadModel) -> String {
        var json = JSONBytes()
        json.raw(#"{"seq":"#)
        json.integer(model.seq)
        json.raw(#","announcements":"#)
        json.array(model.announcements) { $0.announcement($1) }
        json.raw("}")
        return json.text
    }

    static func table(_ model: ReadModel, path: String) -> String {
        var table = TextTable("ID", "REV", "TITLE", "BODY")
        for announcement in model.announcements {
            table.add(
                String(announcement.id),
                String(announcement.revision),
                // No title is blank but one whose line was erased since (see ReadModel.apply).
                announcement.title.isEmpty ? "(text erased)" : VisibleText.escaped(announcement.title.truncated(to: 60)),
                announcement.bodyText.map { "\(Output.count($0.utf8Count)) bytes" } ?? "-"
            )
        }
        let noun = model.count == 1 ? "announcement" : "announcements"
        let summary = "\(Output.count(model.count)) \(noun) at seq \(model.seq) (\(path))"
        return table.isEmpty ? summary : table.rendered + "\n\n" + summary
    }
}
