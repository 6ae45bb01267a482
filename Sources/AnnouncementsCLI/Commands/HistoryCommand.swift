import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

/// `announcements history`: the audit trail of one announcement or of all.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show who changed what, and when.",
        discussion: """
            Lists the events of one announcement (deleted ones too) or of all, oldest first. \
            A TIME is an RFC 3339 time or a seq. With --format jsonl, prints the log's lines unchanged (the lines \
            of an erasure a crash interrupted in the sealed form finishing it writes). \
            With --follow, reads a running server's event feed instead of the log (--server, default \
            $ANNOUNCEMENTS_SERVER or http://127.0.0.1:8080) and prints events as they happen, until \
            interrupted.
            """
    )

    @OptionGroup var options: LogOptions

    @Argument(help: "Only this announcement's events.")
    var id: Int?

    @Option(help: ArgumentHelp("Only events at or after this time or seq.", valueName: "time"))
    var since: String?

    @Option(help: ArgumentHelp("Only events at or before this time or seq.", valueName: "time"))
    var until: String?

    @Option(help: ArgumentHelp("Only events by this writer.", valueName: "name"))
    var by: String?

    @Option(help: ArgumentHelp("Only events of this type: \(Self.types).", valueName: "type"))
    var type: String?

    @Option(help: "Output format: table, json or jsonl.")
    var format: Format = .table

    @Flag(help: "Follow a running server's event feed and print events as they happen.")
    var follow = false

    @OptionGroup var remote: ServerOptions<DefaultServer>

    /// The event types, as `--type` takes them: `created, edited, deleted or erased`.
    static let types = EventType.allCases.dropLast().map(\.rawValue).joined(separator: ", ") + " or " + (EventType.allCases.last?.rawValue ?? "")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, jsonl
    }

    func validate() throws {
        for (name, value) in [("--since", since), ("--until", until)] {
            if let value, LogPoint(value) == nil {
                throw ValidationError("\(name) takes an RFC 3339 time (like 2026-11-21T09:30:00Z) or a seq; got \"\(value)\".")
            }
        }
        if let type, EventType(rawValue: type) == nil {
            throw ValidationError("--type takes \(Self.types); got \"\(type)\".")
        }
        try AnnouncementID.check(id)
        let isBackwards = switch (since.flatMap(LogPoint.init), until.flatMap(LogPoint.init)) {
        case (.seq(let first)?, .seq(let last)?): first > last
        case (.time(let first)?, .time(let last)?): first > last
        default: false
        }
        if isBackwards { throw ValidationError("--since \(since ?? "") comes after --until \(until ?? ""): no event could be in between.") }
        if follow, format == .json { throw ValidationError("--follow prints a table or jsonl, not json (it never ends).") }
        if follow, options.log != nil || options.config != nil {
            throw ValidationError("--follow reads a running server (--server), not a log file (--log, --config).")
        }
        if !follow, remote.server != nil || remote.token != nil || remote.timeout != nil {
            throw ValidationError("--server, --token and --timeout go with --follow (a running server's feed); without it, history reads the log itself (--log, --config).")
        }
    }

    var filter: HistoryFilter {
        HistoryFilter(
            id: id, since: since.flatMap(LogPoint.init), until: until.flatMap(LogPoint.init),
            by: by, type: type.flatMap(EventType.init(rawValue:))
        )
    }

    func run() async throws {
        if follow {
            try await reportingErrors { () async throws(CLIError) in try await followServer() }
            return
        }
        try await reportingErrors { () async throws(CLIError) in
            let source = try options.source()
            let path = LogLines.name(of: source)
            var fold = HistoryFold(path: path, filter: filter)
            var entries: [HistoryEntry] = []
            var lines = 0
            let format = self.format
            do throws(LogError) {
                // An erasure a crash interrupted (its erased event written, its lines not sealed
                // yet) is known first where the fold does not read to its erased event: lines
                // that print as they are read, and a trail cut at --until.
                let erased = format == .jsonl || until != nil ? try await LogLines.erasedIDs(source) : []
                let tail = try await LogLines.read(source) { line throws(LogError) in
                    lines += 1
                    let goesOn = try fold.add(line, unknown: { line, outline in
                        // Shown as written: this version cannot say what it did.
                        Output.note("\(path):\(line.number): \(outline)")
                        let raw = String(decoding: line.bytes, as: UTF8.self)
                        if format == .jsonl { Output.line(raw) } else { Output.note("  as written: \(raw)") }
                    }) { entry in
                        if format == .jsonl {
                            Self.printLine(entry, erased: erased, path: path)
                        } else {
                            entries.append(entry)
                        }
                    }
                    return goesOn ? .continue : .stop
                }
                if let tail {
                    Output.note("\(path):\(lines + 1): ignored \(tail) bytes at the end with no newline (a line being written, or torn by a crash)")
                }
                // An erasure whose lines were not sealed yet (interrupted): its earlier entries
                // came with the texts, which are erased all the same.
                for index in entries.indices where fold.textsErased.contains(entries[index].event.id) || erased.contains(entries[index].event.id) {
                    entries[index].textsErased = true
                }
            } catch {
                throw CLIError(error)
            }
            // The whole log read: an id it never reached was never created (as the API says).
            if let id, until == nil, id > fold.maxId {
                throw CLIError(.failure, "announcement \(id) was never created: the ids of \(path) go up to \(fold.maxId)")
            }
            switch format {
            case .jsonl: break
            case .json: Output.line(HistoryFormat.json(entries))
            case .table:
                Output.line(entries.isEmpty ? Self.nothingFound(id: id) : HistoryFormat.table(entries))
            }
        }
    }

    /// Prints `entry`'s line as the log holds it, or, when its announcement is `erased` and the
    /// line still holds its texts, as finishing the erasure will overwrite it (byte for byte).
    private static func printLine(_ entry: HistoryEntry, erased: Set<Int>, path: String) {
        guard erased.contains(entry.event.id), entry.event.isSealedByErasure else {
            Output.line(String(decoding: entry.bytes, as: UTF8.self))
            return
        }
        guard let sealed = entry.bytes.withUnsafeBytes({ SealableLine.sealed($0) }) else {
            Output.note("\(path):\(entry.line): left out: it holds texts of erased announcement \(entry.event.id), but is not laid out as the store writes lines, so it has no sealed form (`announcements verify` says more)")
            return
        }
        Output.line(String(decoding: sealed, as: UTF8.self))
    }

    private static func nothingFound(id: Int?) -> String {
        id.map { "no events for announcement \($0)" } ?? "no events"
    }
}
