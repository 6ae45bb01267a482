import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

/// `announcements verify`: check the whole log.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the log: format, sequence, references, hash chain and rules.",
        discussion: """
            Exits 0 when the log is sound, 1 when it has problems (each printed as file:line). \
            Data that breaks today's validation rules (written before a rule, or under other limits) \
            is a warning, not a problem: the store replays and serves it as it is. \
            Prints the log's head (SEQ:SHA256): record it, and a later --expect-head with it proves \
            that the log was not cut back or rewritten up to that line since. The head a server \
            recorded beside a log file (LOG.head) and its snapshot (LOG.snapshot) are checked as \
            start-up checks them: a log that lacks what they record is one the server refuses.
            """
    )

    @OptionGroup var options: LogOptions

    @Option(
        name: .customLong("expect-head"),
        help: ArgumentHelp("A head recorded earlier (the `head:` of verify, or of GET /health): the log must still hold it.", valueName: "seq:sha256")
    )
    var expectHead: String?

    func validate() throws {
        if let expectHead, LogHead(expectHead) == nil {
            throw ValidationError("--expect-head takes \(LogHead.form), the `head:` that verify printed (a seq of 1 or more, a colon and 64 hex digits, like 6:3f4d1013…); got \"\(expectHead)\".")
        }
    }

    /// How many problems to print before summarising the rest.
    static let problemsShown = 100

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let (source, rules) = try options.sourceAndRules()
            let expected = expectHead.flatMap(LogHead.init)
            let path = LogLines.name(of: source)
            var report: VerifyReport
            do throws(LogError) {
                var (recorded, recordProblems) = Self.records(source)
                // The same head given and recorded: checked once, as given.
                if recorded?.head == expected { recorded = nil }
                report = try await LogLines.verify(source, rules: rules, expecting: expected, recorded: recorded)
                // A record that cannot be read, a snapshot that covers lines the log lacks: start-up
                // refuses the log for them as well.
                report.problems += recordProblems
            } catch {
                throw CLIError(error)
            }
            for problem in report.problems.prefix(Self.problemsShown) {
                // A problem may quote the line (an unknown type, a bad time): escaped, one line each.
                Output.line(VisibleText.escaped(problem.description))
            }
            if report.problems.count > Self.problemsShown {
                Output.line("… and \(Output.count(report.problems.count - Self.problemsShown)) more problems")
            }
            for warning in report.ruleWarnings.prefix(Self.problemsShown) {
                Output.line("warning: " + VisibleText.escaped(warning.description))
            }
            if report.ruleWarnings.count > Self.problemsShown {
                Output.line("… and \(Output.count(report.ruleWarnings.count - Self.problemsShown)) more warnings")
            }
            if let partial = report.partialTail {
                Output.note("\(path): ignored \(partial) bytes at the end with no newline (a line being written, or torn by a crash)")
            }
            Output.line(Self.summary(report, path: path))
            if !report.isSound { throw CLIError(.failure, "\(path): \(Output.count(report.problems.count, "problem")) found") }
        }
    }

    /// What start-up checks beside a log file besides its lines: the head recorded there
    /// (`<log>.head`, with the record's path), for the verification to check; and the problems of a
    /// record that is there but cannot be read, or of a snapshot that covers lines the log no
    /// longer holds. Nothing for a database's log.
    static func records(_ source: LogOptions.Source) -> (recorded: (head: LogHead, record: String)?, problems: [LogError]) {
        guard case .file(let logPath) = source else { return (nil, []) }
        var recorded: (head: LogHead, record: String)?
        var problems: [LogError] = []
        do throws(LogError) {
            recorded = try HeadRecord.read(besideLog: logPath).map { ($0, HeadRecord.path(forLog: logPath)) }
        } catch {
            problems.append(error)
        }
        do throws(LogError) {
            try SnapshotFile.checkCoveredLines(besideLog: logPath)
        } catch {
            problems.append(error)
        }
        return (recorded, problems)
    }

    static func summary(_ report: VerifyReport, path: String) -> String {
        var unsealed = ""
        if !report.unsealedLines.isEmpty {
            let shown = report.unsealedLines.prefix(5).map(String.init).joined(separator: ", ")
            unsealed = " (unsealed: line\(report.unsealedLines.count == 1 ? "" : "s") \(shown)\(report.unsealedLines.count > 5 ? ", …" : ""))"
        }
        // Lines whose data an erasure took out (their skeleton stays, and the chain proves it).
        let erased = report.erasedLines > 0 ? "\n  erased lines:        \(Output.count(report.erasedLines))" : ""
        // Lines a newer version wrote: each is a problem too, but the count says what to do.
        let unknown = report.unknownLines.isEmpty ? "" : "\n  unknown lines:       \(Output.count(report.unknownLines.count)) (written by a newer version: upgrade)"
        // Data that breaks today's rules: not a problem (it replays and serves), but worth knowing.
        let warnings = report.ruleWarnings.isEmpty ? "" : "\n  rule warnings:       \(Output.count(report.ruleWarnings.count)) (data written before today's validation rules, or under other limits: it replays and serves as it is)"
        var expected = ""
        if let holds = report.holdsExpectedHead {
            expected = "\n  expected head:       \(holds ? "found" : "NOT found")"
        }
        if let holds = report.holdsRecordedHead {
            expected += "\n  recorded head:       \(holds ? "found" : "NOT found") (\(HeadRecord.path(forLog: path)))"
        }
        return """
            \(path): \(report.isSound ? "sound" : "NOT sound")
              events:              \(Output.count(report.events))
              live announcements:  \(Output.count(report.live))
              sealed lines:        \(Output.count(report.sealed)) of \(Output.count(report.events))\(unsealed)\(erased)\(unknown)\(warnings)
              head:                \(report.head?.description ?? "-")\(expected)
            """
    }
}
