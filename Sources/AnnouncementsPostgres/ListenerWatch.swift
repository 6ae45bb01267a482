/// Whether the connection that listens for the other nodes' notices still hears them.
///
/// A half-open connection (an address that moved, a NAT or firewall that forgot the flow, a
/// database host gone silent) is never closed by the database, and nothing is sent on it while it
/// only listens, so it never fails: notices stop, and with them the holder's address (writes
/// are then made through this node, each taking the role) and the prompt wake-ups (the looks,
/// four times a second, still take the lines in). So this process sends a notice of its own now
/// and then, from another connection, and the listener must hear it: one not heard within
/// `interval` closes the listener, which connects again. A value type: its driver (the look
/// thread of `PostgresLog.follow`) does what `next` says.
///
/// A process that did not run for a while (stopped, swapped out, starved of CPU) has not read
/// what came meanwhile either: its ping may be heard, waiting unread. When the driver's asks are
/// `stall` or more apart (from its last ask, or its report of a ping sent, to the next ask), the
/// ping awaited gets a whole interval from then, once: a look that waited that long on the
/// database counts too.
struct ListenerWatch {
    /// What the driver does now.
    enum Action: Equatable {
        case none
        /// Send the notice `ping TOKEN NODE` on the log's channel.
        case ping(token: Int)
        /// Close the listener's connection (it connects again): it did not hear the last ping.
        case reconnect
    }

    /// How long after a listener connects, or hears its ping, the next ping goes; and how long a
    /// ping may go unheard.
    let interval: Duration
    /// A gap between two of the driver's asks that says this process did not run.
    let stall: Duration
    private var nextToken = 1
    /// The ping sent and not yet heard, when it is awaited from, and whether a stall gave it more time.
    private var pending: (token: Int, sent: ContinuousClock.Instant, extended: Bool)?
    /// When the next ping is due (none is while one is pending).
    private var due: ContinuousClock.Instant
    /// When the driver last asked.
    private var asked: ContinuousClock.Instant

    init(interval: Duration, stall: Duration, at now: ContinuousClock.Instant) {
        self.interval = interval
        self.stall = stall
        due = now + interval
        asked = now
    }

    mutating func next(at now: ContinuousClock.Instant) -> Action {
        defer { asked = now }
        if let pending {
            if !pending.extended, now - asked >= stall {
                // This process did not run: the ping may wait unread. A whole interval from now, once.
                self.pending = (pending.token, now, true)
                return .none
            }
            guard now - pending.sent >= interval else { return .none }
            // Unheard: the listener is closed, and the next one gets a whole interval to connect.
            restart(at: now)
            return .reconnect
        }
        guard now >= due else { return .none }
        let token = nextToken
        nextToken += 1
        pending = (token, now, false)
        return .ping(token: token)
    }

    /// The ping `token` is sent (its query answered): it is awaited from now on, not from when
    /// `next` asked for it (the query may have waited behind a long read).
    mutating func sent(token: Int, at now: ContinuousClock.Instant) {
        // The driver ran until now (a send that took long is not a stall).
        asked = now
        guard pending?.token == token else { return }
        pending?.sent = now
    }

    /// The listener heard this process's ping `token`; an older one (late) or an unknown one
    /// changes nothing.
    mutating func heard(token: Int, at now: ContinuousClock.Instant) {
        guard pending?.token == token else { return }
        restart(at: now)
    }

    /// The ping `token` could not be sent (the database is unreachable): nothing to wait for; the
    /// next goes an interval later.
    mutating func notSent(token: Int, at now: ContinuousClock.Instant) {
        asked = now
        guard pending?.token == token else { return }
        restart(at: now)
    }

    /// The listener (re)connected and listens: a ping sent before cannot be heard, and the next
    /// goes an interval later.
    mutating func connected(at now: ContinuousClock.Instant) {
        restart(at: now)
    }

    /// Nothing awaited; the next ping an interval from `now`.
    private mutating func restart(at now: ContinuousClock.Instant) {
        pending = nil
        due = now + interval
    }

    /// The payload of ping `token` from `node`.
    static func payload(token: Int, node: String) -> String {
        "ping \(token) \(node)"
    }

    /// The token of a ping `node` sent; nil for any other payload.
    static func token(inPayload payload: String, node: String) -> Int? {
        let words = payload.split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == "ping", words[2] == node else { return nil }
        return Int(words[1])
    }
}
