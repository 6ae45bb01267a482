/// What `verify` found in a log.
public struct VerifyReport: Sendable {
    /// The number of events (complete lines).
    public var events = 0
    /// The live announcements after the last event.
    public var live = 0
    /// Lines whose place in the hash chain is proven: line 1, and every line whose `prev` matches.
    public var sealed = 0
    /// Lines after line 1 without a `prev` (hand-made or imported): not a problem, but not proven.
    public var unsealedLines: [Int] = []
    /// The SHA-256 of the last line: publish it to detect later rewrites of the history.
    public var lastHash: LineHash?
    /// Every problem, each naming its line.
    public var problems: [LogError] = []
    /// Bytes after the last newline (a line being written, or torn by a crash); not a problem.
    public var partialTail: Int?

    /// True when no problem was found.
    public var isSound: Bool { problems.isEmpty }
}

extension LogReader {
    /// Checks the whole log: format, sequence, references, the hash chain, time order and the
    /// validation rules, going on after each problem to find them all.
    public func verify(rules: ValidationRules = ValidationRules()) throws(LogError) -> VerifyReport {
        var report = VerifyReport()
        var model = ReadModel()
        model.deferTitleIndex()
        var previous: (hash: LineHash, at: Timestamp?)?
        var reader = self
        reader.computesHashes = true
        let path = self.path
        func problem(_ line: Int, _ message: String) {
            report.problems.append(LogError(.invalidLine, path: path, line: line, message: message))
        }
        let summary = try reader.read { line throws(LogError) in
            report.events += 1
            defer { previous = line.hash.map { ($0, (try? line.parsed.get())?.at) } }
            let event: Event
            switch line.parsed {
            case .failure(let error):
                problem(line.number, error.message + (line.isLast && error.isMalformedJSON ? " (a line torn by a crash: the next server start moves it aside)" : ""))
                return .continue
            case .success(let parsed):
                event = parsed
            }
            switch (event.prev, previous) {
            case (nil, nil):
                report.sealed += 1
            case (nil, _?):
                report.unsealedLines.append(line.number)
            case (_?, nil):
                problem(line.number, "line 1 has a `prev`, but no line comes before it (was the start of the log cut off?)")
            case (let prev?, let before?):
                if prev == before.hash {
                    report.sealed += 1
                } else {
                    problem(line.number, "`prev` does not match the SHA-256 of line \(line.number - 1): a line before this one was changed after it was written")
                }
            }
            if let earlier = previous?.at, event.at < earlier {
                problem(line.number, "time goes back: \(event.at) is before the previous line's \(earlier)")
            }
            switch event.change {
            case .created(let draft):
                for rule in rules.problems(draft) { problem(line.number, "data.\(rule.field) \(rule.message)") }
            case .edited(let patch):
                for rule in rules.problems(patch) { problem(line.number, "data.\(rule.field) \(rule.message)") }
            case .deleted:
                break
            }
            do throws(ApplyProblem) {
                try model.apply(event)
            } catch {
                problem(line.number, error.message)
                model.force(event)
            }
            return .continue
        }
        report.lastHash = previous?.hash
        report.live = model.count
        report.partialTail = summary.tail?.bytes.count
        return report
    }
}
