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
    /// returns its report and size. A copy that does not verify is removed, never named `target`.
    static func make(of source: LogOptions.Source, to target: String, rules: ValidationRules) async throws(CLIError) -> (report: VerifyReport, bytes: Int64) {
        let name = LogLines.name(of: source)
        var attempt = 1
        var previous: [String]?
        while true {
            let (report, tail, bytes) = try await copy(source, to: target, rules: rules)
            if report.isSound {
                if let tail { Output.note("\(name): left out \(tail) bytes at the end with no newline (a line being written, or torn by a crash)") }
                return (report, bytes)
            }
            // The same problems twice: the log has them, no erasure was under way.
            let problems = report.problems.map(\.description)
            guard attempt < attempts, problems != previous else {
                for problem in report.problems.prefix(VerifyCommand.problemsShown) { Output.line(VisibleText.escaped(problem.description)) }
                throw CLIError(.dataError, "\(name): the copy does not verify (\(Output.count(report.problems.count)) problem\(report.problems.count == 1 ? "" : "s"), above): the log itself has them; `announcements verify` says more")
            }
            Output.note("\(name): the copy did not verify; copying again, in case an erasure was overwriting a line while it was read")
            previous = problems
            attempt += 1
        }
    }

    /// Copies the complete lines of `source` to a new file `target`, checking them as `verify`
    /// does; the file is named `target` only when they verify.
    private static func copy(_ source: LogOptions.Source, to target: String, rules: ValidationRules) async throws(CLIError) -> (VerifyReport, tail: Int?, bytes: Int64) {
        try await NewFile.create(target, keepingIf: { $0.0.isSound }) { file throws(LogError) in
            var verification = LogVerification(path: LogLines.name(of: source), rules: rules)
            let tail = try await LogLines.read(source, computesHashes: true) { line throws(LogError) in
                verification.check(line)
                try file.append(line: line.bytes)
                return .continue
            }
            return (verification.report(tail: tail), tail, file.size)
        }
    }
}
