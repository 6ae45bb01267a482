import AnnouncementsDomain
import AnnouncementsStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A copy of a log's complete lines into a new file that is kept only once it verifies: what
/// `backup` and `export` make. An erasure beside a running server appends its `erased` event, then
/// overwrites the earlier lines in place: a copy read in between holds the texts it erases (and
/// `verify` says so), so it is taken again, and a copy that still does not verify is refused.
enum VerifiedCopy {
    /// How many times a copy that does not verify is taken.
    static let attempts = 3

    /// Copies `source` to the new file `target` until the copy verifies, at most `attempts` times;
    /// returns its report and size. A copy that does not verify is removed, never named `target`;
    /// with `acceptingBrokenChain`, one whose only problems are breaks of the chain is kept (each
    /// break a note).
    static func make(of source: LogOptions.Source, to target: String, rules: ValidationRules, acceptingBrokenChain: Bool = false) async throws(CLIError) -> (report: VerifyReport, bytes: Int64) {
        let name = LogLines.name(of: source)
        // What is recorded beside a log file (its head, its snapshot's last line), read before its
        // lines: a log that lacks what they record is one start-up refuses, and its copy, with
        // records of its own, would hide the loss. (A server records only lines already durable,
        // so the copy, which reads every line durable when it begins, holds them.)
        let (recorded, recordProblems) = VerifyCommand.records(source)
        // A record that cannot be read is that record's problem, with its own exit code.
        if let unreadable = recordProblems.first(where: { $0.kind != .damaged }) { throw CLIError(unreadable) }
        guard recordProblems.isEmpty else {
            for problem in recordProblems { Output.line(VisibleText.escaped(problem.description)) }
            throw CLIError(.dataError, "\(name): the log does not hold what is recorded beside it (above): a server does not start on it, and no copy is made; `announcements verify` says more")
        }
        var attempt = 1
        var previous: [String]?
        while true {
            let (report, tail, bytes, held) = try await copy(source, to: target, rules: rules, recorded: recorded, acceptingBrokenChain: acceptingBrokenChain)
            if !held {
                // Not a problem of the log's: a write undone (cut back) while the copy read it.
                guard attempt < attempts else {
                    throw CLIError(.tempFail, "\(name): the log's last lines changed while they were copied (\(attempts) times): a server cut back writes that failed; check its disk and retry")
                }
                Output.note("\(name): the log's last lines changed while they were copied (a write that failed was cut back); copying again")
                attempt += 1
                continue
            }
            if isKept(report, acceptingBrokenChain: acceptingBrokenChain) {
                for problem in report.problems.prefix(VerifyCommand.problemsShown) { Output.note("\(problem.description); copied as it is (--accept-broken-chain)") }
                if report.problems.count > VerifyCommand.problemsShown {
                    Output.note("\(name): \(Output.count(report.problems.count - VerifyCommand.problemsShown)) more breaks of the chain copied as they are; `announcements verify` lists them")
                }
                if let tail { Output.note("\(name): left out \(tail) bytes at the end with no newline (a line being written, or torn by a crash)") }
                return (report, bytes)
            }
            // The same problems twice: the log has them, no erasure was under way.
            let problems = report.problems.map(\.description)
            guard attempt < attempts, problems != previous else {
                for problem in report.problems.prefix(VerifyCommand.problemsShown) { Output.line(VisibleText.escaped(problem.description)) }
                let accepting = report.hasOnlyChainBreaks ? " (every one a break of the hash chain: --accept-broken-chain copies the log as it is)" : ""
                throw CLIError(.dataError, "\(name): the copy does not verify (\(Output.count(report.problems.count, "problem")), above): the log itself has them; `announcements verify` says more\(accepting)")
            }
            Output.note("\(name): the copy did not verify; copying again, in case an erasure was overwriting a line while it was read")
            previous = problems
            attempt += 1
        }
    }

    /// Copies the complete lines of `source` to a new file `target`, checking them as `verify`
    /// does (with `recorded`, the head recorded beside the log, that they hold it); the file is named `target` only when they verify and, for a file, when the log still
    /// holds the last of them once they are copied (`held`). A file's lines are synced to disk
    /// before they are read: the copy holds only lines the log keeps through a power loss.
    private static func copy(
        _ source: LogOptions.Source, to target: String, rules: ValidationRules, recorded: (head: LogHead, record: String)?, acceptingBrokenChain: Bool
    ) async throws(CLIError) -> (VerifyReport, tail: Int?, bytes: Int64, held: Bool) {
        try await NewFile.create(target, keepingIf: { isKept($0.0, acceptingBrokenChain: acceptingBrokenChain) && $0.held }) { file throws(LogError) in
            var verification = LogVerification(path: LogLines.name(of: source), rules: rules, recorded: recorded)
            var last: (offset: Int64, bytes: ArraySlice<UInt8>)?
            let tail = try await LogLines.read(source, computesHashes: true, syncsFirst: true) { line throws(LogError) in
                verification.check(line)
                try file.append(line: line.bytes)
                last = (line.offset, line.bytes)
                return .continue
            }
            var held = true
            if case .file(let path) = source, let last { held = LogReader.holds(last.bytes, at: last.offset, in: path) }
            return (verification.report(tail: tail), tail, file.size, held)
        }
    }

    /// Whether a copy with `report` is kept: one that verifies, or, `acceptingBrokenChain`, one
    /// whose only problems are breaks of the chain.
    private static func isKept(_ report: VerifyReport, acceptingBrokenChain: Bool) -> Bool {
        report.isSound || (acceptingBrokenChain && report.hasOnlyChainBreaks)
    }
}
