import NIOCore

/// When a connection must be closed, decided from what happened on it: a plain value that the
/// channel handler feeds with events and asks for the next deadline (tested without sockets).
///
/// - Idle: nothing owed either way (no request being read, no response being written, none of
///   one's bytes still waiting to be sent) for `idleTimeout`. A response's end is handed to
///   SwiftNIO before its bytes have left: when the limit runs out with output still waiting, the
///   connection is not idle but watched as unread, below.
/// - Read: a request's first byte came `readTimeout` ago and its end has not (slowloris heads,
///   stalled uploads).
/// - Unread: the client has left what it was sent unread for `idleTimeout` (a response, or an event
///   stream, whose client stopped reading): none of the output has left in that time (the bytes
///   sent, counted as those handed over less those still waiting, have not grown). A client that
///   reads a large answer slowly, but reads, is not cut. Event streams are otherwise exempt from
///   the idle timeout: a response in progress is not idle.
/// - Shutdown: a graceful stop began `shutdownGrace` ago and the connection is still open.
struct ConnectionClock {
    /// Why a connection was closed.
    enum Expiry: Equatable, CustomStringConvertible {
        case idle, read, unread, shutdown

        var description: String {
            switch self {
            case .idle: "idle for longer than the idle timeout"
            case .read: "the request took longer than the read timeout to arrive"
            case .unread: "the client left its response unread for longer than the idle timeout"
            case .shutdown: "the server is stopping and the shutdown grace period is over"
            }
        }
    }

    let idleTimeout: TimeAmount
    let readTimeout: TimeAmount
    let shutdownGrace: TimeAmount

    /// Since when nothing is owed; nil while a request is being read or answered.
    private(set) var idleSince: NIODeadline?
    /// When the request being read sent its first byte; nil between requests.
    private(set) var readingSince: NIODeadline?
    /// Requests whose response has not ended.
    private(set) var responsesOwed = 0
    /// Since when the output is watched as unread (the channel is not writable, or a response's
    /// end found bytes still waiting) and none of it has left.
    private var unreadSince: NIODeadline?
    /// The bytes sent when the output was last looked at, while watched.
    private var sentAtLook: Int?
    /// When a graceful stop began.
    private var stoppingSince: NIODeadline?

    init(limits: ConnectionLimits, openedAt now: NIODeadline) {
        idleTimeout = TimeAmount(limits.idleTimeout)
        readTimeout = TimeAmount(limits.readTimeout)
        shutdownGrace = TimeAmount(limits.shutdownGrace)
        idleSince = now
    }

    // MARK: - Events

    /// Bytes arrived: the first of a request starts its read time.
    mutating func bytesArrived(at now: NIODeadline) {
        if readingSince == nil {
            readingSince = now
            idleSince = nil
        }
    }

    /// A request's head was parsed.
    mutating func requestBegan(at now: NIODeadline) {
        bytesArrived(at: now)
        responsesOwed += 1
    }

    /// A request's body (or its head, without a body) ended.
    mutating func requestEnded(at now: NIODeadline) {
        readingSince = nil
        if responsesOwed == 0 { idleSince = now }
    }

    /// A response ended.
    mutating func responseEnded(at now: NIODeadline) {
        responsesOwed = max(0, responsesOwed - 1)
        if responsesOwed == 0, readingSince == nil { idleSince = now }
    }

    /// The channel became writable again (`true`), or its unsent output passed its bound
    /// (`false`), when `sent` bytes had left.
    mutating func writabilityChanged(isWritable: Bool, sent: Int, at now: NIODeadline) {
        if isWritable {
            // A response's last bytes may still be waiting: the idle limit starts over from the
            // moment the client took the rest (and looks again when it runs out).
            if unreadSince != nil, responsesOwed == 0, readingSince == nil { idleSince = now }
            unreadSince = nil
            sentAtLook = nil
        } else if unreadSince == nil {
            unreadSince = now
            sentAtLook = sent
        }
    }

    /// The output, looked at when the idle or the unread limit ran out: `unsent` bytes still
    /// waiting, `sent` gone. Returns whether to keep the connection:
    /// - idle, with output still waiting: it is on its way, not idle; from `now` it is watched as
    ///   unread (kept);
    /// - unread, and more has left since the last look: the client reads (slowly), and the limit
    ///   starts again from `now` (kept); once a finished answer has all left, the idle limit
    ///   starts from `now` (a response in progress stays watched until its channel is writable);
    /// - otherwise: cut (idle with nothing waiting, or unread with nothing more gone).
    mutating func outputLooked(unsent: Int, sent: Int, at now: NIODeadline) -> Bool {
        guard unreadSince != nil, let before = sentAtLook else {
            guard unsent > 0 else { return false }
            unreadSince = now
            sentAtLook = sent
            return true
        }
        if unsent == 0, responsesOwed == 0 {
            unreadSince = nil
            sentAtLook = nil
            if readingSince == nil { idleSince = now }
            return true
        }
        guard sent > before else { return false }
        unreadSince = now
        sentAtLook = sent
        return true
    }

    /// A graceful stop began.
    mutating func stopping(at now: NIODeadline) {
        stoppingSince = stoppingSince ?? now
    }

    // MARK: - Decisions

    /// The earliest moment one of the limits runs out, if any applies.
    var deadline: NIODeadline? {
        var earliest: NIODeadline?
        forEachDeadline { at, _ in earliest = min(earliest ?? at, at) }
        return earliest
    }

    /// The limit that has run out at `now`, if any.
    func expiry(at now: NIODeadline) -> Expiry? {
        var expired: Expiry?
        forEachDeadline { at, expiry in
            if expired == nil, at <= now { expired = expiry }
        }
        return expired
    }

    /// Each limit that applies now and when it runs out (no allocation: this runs per request).
    private func forEachDeadline(_ body: (NIODeadline, Expiry) -> Void) {
        if let stoppingSince { body(stoppingSince + shutdownGrace, .shutdown) }
        if let readingSince { body(readingSince + readTimeout, .read) }
        if let unreadSince { body(unreadSince + idleTimeout, .unread) }
        if let idleSince, responsesOwed == 0, readingSince == nil, unreadSince == nil { body(idleSince + idleTimeout, .idle) }
    }
}
