import AnnouncementsClient
import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension HistoryCommand {
    /// `history --follow`: the server's feed, filtered, one line per event, until interrupted or
    /// `--until` is reached: its seq, or the first event after its time (the store's times never
    /// go back, so no later event can match).
    func followServer() async throws(CLIError) {
        let client = try remote.client()
        let filter = self.filter
        // A seq in --since starts the feed there; anything else is filtered as events arrive.
        var after = 0
        if case .seq(let seq)? = filter.since { after = max(0, seq - 1) }
        // The feed retries an unreachable server forever: fail at once when it is not there to
        // start with, or when its log ends before `after` (then nothing is printed at all).
        let first: [FeedEvent]
        do {
            first = try await client.eventPage(after: after, limit: 1)
        } catch {
            throw Self.followError(error, after: after)
        }
        if let event = first.first, Self.isPublicForm(event) { throw Self.publicFormOnly(tokenSent: client.token != nil) }
        // Columns as wide as most of their cells: a seq of the follow's first digits and more, a
        // time, the longest type, a writer's name, an id.
        var table = RunningTable(widths: [max(3, String(after + 1).count + 1), 24, 7, 6, 3])
        if format == .table {
            Output.line(table.line(HistoryFormat.header))
            fflush(nil)
        }
        // The fold the log's history makes, from where the follow starts: what an edit or a
        // delete changed, from the events it saw before (an announcement it did not see, only
        // what became of it).
        var fold = HistoryFold(path: "the event feed", filter: filter, startsMidLog: true)
        do {
            for try await feedEvent in client.events(after: after) {
                let event: Event
                do throws(LineProblem) {
                    event = try EventParser.parse(Array(feedEvent.line.utf8))
                } catch {
                    if Self.isPublicForm(feedEvent) { throw Self.publicFormOnly(tokenSent: client.token != nil) }
                    Output.note("event \(feedEvent.seq) skipped: the server sent a line that is not an event (\(error.message))")
                    continue
                }
                if case .time(let last)? = filter.until, event.at > last { return }
                let bytes = Array(feedEvent.line.utf8)
                let line = LogLine(number: event.seq, offset: 0, bytes: bytes[...], parsed: .success(event), isLast: false)
                let goesOn: Bool
                do throws(LogError) {
                    goesOn = try fold.add(line) { entry in
                        Output.line(format == .jsonl ? feedEvent.line : table.line(HistoryFormat.cells(entry)))
                        fflush(nil)  // each event as it happens, also into a pipe
                    }
                } catch {
                    throw CLIError(error)
                }
                if !goesOn { return }
            }
        } catch let error as CLIError {
            throw error
        } catch let error as ClientError {
            throw Self.followError(error, after: after)
        } catch {
            throw CLIError(.failure, "the event feed stopped: \(error)")
        }
    }

    /// Whether the server sent the feed's public form (`seq`, `type`, `id`, `at`): it does to a
    /// token that is not an auditor's or an admin's, and a full line always names its writer.
    static func isPublicForm(_ event: FeedEvent) -> Bool {
        !event.line.contains(#""by""#)
    }

    /// The refusal of a feed in its public form, to a token of another role or to none.
    static func publicFormOnly(tokenSent: Bool) -> CLIError {
        let given = tokenSent ? "the server sends this token" : "without a token, the server sends"
        return CLIError(.noPermission, "\(given) the feed's public form (seq, type, id and time, no text or writer): history --follow needs an auditor's or an admin's token (pass --token, or set ANNOUNCEMENTS_TOKEN)")
    }

    /// A failed request of a follow that started after `after`, as one line and an exit code.
    static func followError(_ error: ClientError, after: Int) -> CLIError {
        guard case .positionBeyondLog(let requested, let lastSeq) = error else { return CLIError(error) }
        // The server's log is shorter than where the follow starts (or had got to): restored from
        // an older backup. Waiting would print the events that take those seqs next, as if new.
        let place = requested == after ? "starts" : "had got to"
        // (The seq after: a number the server sent, or `--since`, may be Int.max.)
        let next = { (seq: Int) in seq < .max ? String(seq + 1) : "\(seq) + 1" }
        return CLIError(.failure, "the server's log ends at seq \(lastSeq), before seq \(next(requested)) where this follow \(place): it may have been restored from an older backup; follow with --since \(next(lastSeq)) for what comes next, or without --since to read it all again")
    }
}
