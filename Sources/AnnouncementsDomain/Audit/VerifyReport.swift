/// What `verify` found in a log.
public struct VerifyReport: Sendable {
    /// The number of events (complete lines).
    public var events = 0
    /// The live announcements after the last event.
    public var live = 0
    /// Lines whose place in the hash chain is proven: line 1, and every line whose `prev` matches.
    public var sealed = 0
    /// Lines after line 1 without a `prev` before the chain starts (an old or imported log): not
    /// a problem, but not proven. Once a line has a `prev`, every later line must have one.
    public var unsealedLines: [Int] = []
    /// Lines whose data was erased (sealed lines: their skeleton and the digest of their data).
    public var erasedLines = 0
    /// The seq of the last `erased` event: a snapshot that covers less was taken before it.
    public var lastErasureSeq: Int?
    /// Lines of an event type or format this version does not know (a newer version wrote them):
    /// each is also a problem, since this version cannot check them.
    public var unknownLines: [Int] = []
    /// The last line's link in the chain (`LineHash(link:)`; `head` gives it with its seq, the form to record).
    public var lastHash: LineHash?
    /// Whether the log still holds the head recorded earlier (`verify(expecting:)`); nil when
    /// none was given. When it does not, `problems` says how the log differs.
    public var holdsExpectedHead: Bool?
    /// Whether the log holds the head recorded beside it (`<log>.head`, which start-up checks);
    /// nil when there is none. When it does not, `problems` says how the log differs.
    public var holdsRecordedHead: Bool?
    /// Every problem, each naming its line.
    public var problems: [LogError] = []
    /// The lines whose `prev` does not match the line before (each also a problem): a log served
    /// with `--accept-broken-chain` has them, and may be copied with them.
    public var chainBreaks: [Int] = []
    /// Lines whose data breaks today's validation rules (written before a rule, or under another
    /// config's limits, such as a larger `max_body_bytes`): each naming its line and field. Not
    /// problems: the store replays and serves them as they are, and the log is sound with them.
    public var ruleWarnings: [LogError] = []
    /// Bytes after the last newline (a line being written, or torn by a crash); not a problem.
    public var partialTail: Int?

    /// True when no problem was found.
    public var isSound: Bool { problems.isEmpty }

    /// True when every problem is a break of the chain (and there is one).
    public var hasOnlyChainBreaks: Bool { !problems.isEmpty && problems.count == chainBreaks.count }

    /// The seq the last line names (its line number in a sound log, where seqs run 1, 2, 3…).
    public var lastSeq: Int?

    /// The last line and its hash, `SEQ:SHA256`: what to record and later pass to `verify(expecting:)`.
    public var head: LogHead? {
        lastHash.map { LogHead(seq: lastSeq ?? events, hash: $0) }
    }
}

/// The checks of `verify`, one line at a time, in log order: format, sequence, references, the
/// hash chain and time order, going on after each problem to find them all; and the validation
/// rules, whose breaches are warnings (`VerifyReport.ruleWarnings`), not problems.
/// A log's reader feeds it lines (with their hashes) and takes the report at the end.
public struct LogVerification: Sendable {
    /// The log's name in problems (its path).
    public let path: String
    public let rules: ValidationRules
    /// A head recorded earlier, that the log must still hold unchanged (see `report(tail:)`).
    public var expected: LogHead? { heads.first { $0.record == nil }?.head }
    private var report = VerifyReport()
    private var model = ReadModel()
    /// The hash chain up to the line before, and that line's time.
    private var chain = HashChain()
    private var previousAt: Timestamp?
    /// The seq of the last line that names one.
    private var lastSeq: Int?
    /// The heads the log must hold: one given (`record` nil), and the one recorded beside it.
    private var heads: [HeadCheck] = []
    /// Whether the line before was one this version does not know: how a newer version links the
    /// next line to it is unknown too, so that link is not checked.
    private var previousIsUnknown = false
    /// By announcement, the first line whose data is erased while no erased event has come yet.
    private var erasedBeforeEvent: [Int: Int] = [:]
    /// By announcement, the first line that still holds data erasure would remove.
    private var dataLines: [Int: Int] = [:]

    /// With `expected`, a head recorded earlier, it also checks that the log still holds that
    /// line unchanged: a log cut back before it, or rewritten up to it, is a problem. (The chain
    /// alone cannot tell: a log cut after any line, or whose last lines were rewritten with their
    /// `prev`s recomputed, is a sound chain.)
    ///
    /// With `recorded`, the head recorded beside the log and the record's path, it checks that
    /// head the same way, as start-up does: a log that does not hold it is one the server refuses.
    public init(path: String, rules: ValidationRules = ValidationRules(), expecting expected: LogHead? = nil, recorded: (head: LogHead, record: String)? = nil) {
        self.path = path
        self.rules = rules
        if let expected { heads.append(HeadCheck(head: expected, record: nil)) }
        if let recorded { heads.append(HeadCheck(head: recorded.head, record: recorded.record)) }
        model.deferTitleIndex()
    }

    private mutating func problem(_ line: Int, _ message: String) {
        report.problems.append(LogError(.invalidLine, path: path, line: line, message: message))
    }

    private mutating func ruleWarnings(_ line: Int, _ breaches: [FieldProblem]) {
        for breach in breaches {
            report.ruleWarnings.append(LogError(.invalidLine, path: path, line: line, message: "data.\(breach.field) \(breach.message)"))
        }
    }

    /// Checks the next line, which must carry its hash.
    public mutating func check(_ line: LogLine) {
        report.events += 1
        defer { previousAt = (try? line.parsed.get())?.at }
        let afterUnknown = previousIsUnknown
        previousIsUnknown = false
        // A recorded head is found by its seq (the line number, unless lines were removed).
        let seq = line.seq
        for index in heads.indices where seq == heads[index].head.seq {
            guard let hash = line.hash else { continue }
            let check = heads[index]
            heads[index].found = hash == check.head.hash
            if hash != check.head.hash { problem(line.number, check.mismatch(line: line.number, hash: hash)) }
        }
        let event: Event
        lastSeq = seq
        switch line.parsed {
        case .failure(let error):
            problem(line.number, error.message + (line.isLast && error.isMalformedJSON ? LineProblem.wholeLastLine : ""))
            if let unknown = error.unknown {
                report.unknownLines.append(line.number)
                // Keep the line's place, so that the next line is not reported as a gap.
                model.skip(unknown.seq, id: unknown.id)
                if unknown.newerFormat == nil {
                    // A known format links as this version knows: a line replaced by one of an
                    // unknown type still breaks the chain.
                    checkLink(unknown.prev, line: line, afterUnknown: afterUnknown)
                    return
                }
                // How a newer format links its lines is unknown too.
                previousIsUnknown = true
            }
            chain.pass(link: line.hash)
            return
        case .success(let parsed):
            event = parsed
        }
        checkLink(event.prev, line: line, afterUnknown: afterUnknown, format: event.format)
        if let earlier = previousAt, event.at < earlier {
            problem(line.number, "time goes back: \(event.at) is before the previous line's \(earlier)")
        }
        switch event.change {
        case .created(let draft):
            ruleWarnings(line.number, rules.problems(draft))
        case .edited(let patch):
            ruleWarnings(line.number, rules.problems(patch))
            // Byte for byte, as the store compares (it never writes such an edit).
            if let current = model.announcement(id: event.id), current.changes(patch) == nil {
                problem(line.number, "an `edited` event that changes nothing: announcement \(event.id) already has this \(patch.title == nil ? "body" : patch.body == nil ? "title" : "title and body") (the store never writes one)")
            }
        case .deleted:
            break
        case .sealed:
            report.erasedLines += 1
            if erasedBeforeEvent[event.id] == nil { erasedBeforeEvent[event.id] = line.number }
        case .erased:
            report.lastErasureSeq = event.seq
            erasedBeforeEvent[event.id] = nil
            if let held = dataLines.removeValue(forKey: event.id) {
                problem(line.number, "announcement \(event.id) is erased here, but line \(held) still holds its data: the erasure was interrupted (the next start of a server, or `announcements erase`, finishes it)")
            }
        }
        if event.isErasable, event.isSealedByErasure, dataLines[event.id] == nil { dataLines[event.id] = line.number }
        do throws(ApplyProblem) {
            try model.apply(event)
        } catch {
            problem(line.number, error.message)
            model.force(event)
        }
    }

    /// Checks a line's `prev` against the line before it (not when that one is of a newer format).
    private mutating func checkLink(_ prev: LineHash?, line: LogLine, afterUnknown: Bool, format: UInt8? = nil) {
        switch chain.follow(line: line.number, prev: prev, format: format, link: line.hash, afterUnknown: afterUnknown) {
        case .proven: report.sealed += 1
        case .unproven: report.unsealedLines.append(line.number)
        case .broken(let why):
            report.chainBreaks.append(line.number)
            problem(line.number, why)
        }
    }

    /// The report once every line is checked; `tail` is the number of bytes after the last line
    /// (a line being written, or torn by a crash), if any.
    public func report(tail: Int?) -> VerifyReport {
        var report = self.report
        report.lastHash = chain.last
        report.lastSeq = lastSeq
        for check in heads {
            let holds = check.found == true
            if check.record == nil { report.holdsExpectedHead = holds } else { report.holdsRecordedHead = holds }
            // Found: the chain covers every line up to it. Found with another hash: said at its line.
            guard check.found == nil else { continue }
            report.problems.append(LogError(.invalidLine, path: path, message: check.missing(end: lastSeq ?? report.events)))
        }
        for (id, number) in erasedBeforeEvent.sorted(by: { $0.value < $1.value }) {
            report.problems.append(.sealedWithoutErasure(id: id, line: number, path: path))
        }
        report.live = model.count
        report.partialTail = tail
        return report
    }
}

extension LogError {
    /// Line `line` of the log at `path` holds announcement `id` sealed (its texts erased), and no
    /// erased event of it follows: an erasure appends that event before it overwrites anything.
    public static func sealedWithoutErasure(id: Int, line: Int, path: String) -> LogError {
        LogError(.invalidLine, path: path, line: line, message: "the data of announcement \(id) was erased here, but no erased event for it follows (an erasure appends that event before it erases anything): the line was changed by hand, or the log lost its erased event (restore it from a backup; a last line that is that event without its newline needs only the newline)")
    }
}

/// A head a log must hold (`LogVerification`): one given, or the one recorded beside the log.
private struct HeadCheck: Sendable {
    let head: LogHead
    /// The record's path (`<log>.head`); nil for a head given to `verify`.
    let record: String?
    /// Whether its seq's line had its hash; nil until that line is read.
    var found: Bool?

    /// The problem of its seq's line, `line`, whose hash is `hash`, not the head's.
    func mismatch(line: Int, hash: LineHash) -> String {
        guard let record else {
            return "the SHA-256 of line \(line) is \(hash), not the recorded head's \(head.hash): the log was rewritten up to the recorded head (restore it from a backup that holds \(head))"
        }
        return "the SHA-256 of line \(line) is \(hash), not \(head.hash): " + RecordRemedy.startUp.headRefusal(record: record, head: head, endingAt: nil)
    }

    /// The problem of a log without its seq's line, which ends at seq `end`.
    func missing(end: Int) -> String {
        guard let record else {
            return end < head.seq
                ? "the log ends at seq \(end), before the recorded head \(head.seq): it was cut back (restore it from a backup that holds \(head))"
                : "the log has no line of seq \(head.seq), the recorded head's: it was removed (restore the log from a backup that holds \(head))"
        }
        return RecordRemedy.startUp.headRefusal(record: record, head: head, endingAt: end < head.seq ? end : nil)
    }
}
