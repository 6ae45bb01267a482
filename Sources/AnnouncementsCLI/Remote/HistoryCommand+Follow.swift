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
        if let event = first.first, Self.isPublicForm(event) { throw Self.publicFormOnly }
        if format == .table {
            Output.line("SEQ  TIME                      EVENT    BY  ID  CHANGE")
            fflush(nil)
        }
        do {
            for try await feedEvent in client.events(after: after) {
                let event: Event
                do throws(LineProblem) {
                    event = try EventParser.parse(Array(feedEvent.line.utf8))
                } catch {
                    if Self.isPublicForm(feedEvent) { throw Self.publicFormOnly }
                    Output.note("event \(feedEvent.seq) skipped: the server sent a line that is not an event (\(error.message))")
                    continue
                }
                if case .time(let last)? = filter.until, event.at > last { return }
                if filter.matches(event) {
                    Output.line(format == .jsonl ? feedEvent.line : Self.row(event))
                    fflush(nil)  // each event as it happens, also into a pipe
                }
                if case .seq(let last)? = filter.until, event.seq >= last { return }
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

    static let publicFormOnly = CLIError(.noPermission, "the server sends this token the feed's public form (seq, type, id and time, no text or writer): history --follow needs an auditor's or an admin's token (pass --token, or set ANNOUNCEMENTS_TOKEN)")

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

    /// `7  2026-11-22T01:09:07.264Z  created  editor  7  "Fire drill"`: what the feed alone tells,
    /// titles and writers escaped for the terminal.
    static func row(_ event: Event) -> String {
        let change: String
        switch event.change {
        case .created(let draft): change = "\"\(VisibleText.escaped(draft.title))\"\(draft.bodyText.map { " (body \($0.utf8Count) bytes)" } ?? "")"
        case .edited(let patch):
            var parts: [String] = []
            if let title = patch.title { parts.append("title → \"\(VisibleText.escaped(title))\"") }
            switch patch.body {
            case .set(let body)?: parts.append("body → \(body.utf8Count) bytes")
            case .clear?: parts.append("body cleared")
            case nil: break
            }
            change = parts.joined(separator: "; ")
        case .deleted: change = "deleted"
        case .sealed: change = "(text erased)"
        case .erased(let reason): change = "erased: \"\(VisibleText.escaped(reason))\""
        }
        return "\(event.seq)  \(event.at)  \(event.type.rawValue.padding(to: 7))  \(VisibleText.escaped(event.by))  \(event.id)  \(change)"
    }
}
