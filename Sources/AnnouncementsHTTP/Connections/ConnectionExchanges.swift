import NIOHTTP1

/// What one HTTP/1 connection owes its client, decided from what happened on it: a plain value
/// that `ConnectionGuard` feeds with the requests it reads and the responses it writes, and asks
/// what to do (tested without sockets).
///
/// - A response goes out in its request's version, saying whether the connection stays open:
///   `Connection: close` when the client did not ask to keep it (or a parse failure closes it),
///   and for HTTP/1.0 `Connection: keep-alive` when it did and the response has a length (a
///   response without one ends when the connection closes, so it closes it).
/// - A request that says `Expect: 100-continue` hears `100 Continue` once it is the first owed:
///   at once when nothing is owed before it, else as soon as the responses before it have ended
///   (while its body has not come): written while an earlier response goes out, the interim head
///   would break that one's framing.
/// - A client that closes its side while a response without a length (an event stream) goes
///   out has left: the connection closes, and the stream learns it at once, not at its next write.
/// - When the parser fails (a bad chunk size, an unknown transfer coding, bytes that are not
///   HTTP), the client gets a JSON error and then the connection closes, whatever was under way:
///   nothing owed, the rejection goes out at once; a request whose body was cut off by the failure
///   fails (its handler reads the error, so nothing of it is written) and its answer closes the
///   connection; requests read whole are answered first, then the rejection.
struct ConnectionExchanges {
    /// What an unanswered request asked of its response.
    struct Owed: Equatable {
        var version: HTTPVersion
        var keepAlive: Bool
        /// A HEAD request's response has no body, whatever its headers say.
        var isHead: Bool
        /// It said `Expect: 100-continue`, and waits behind earlier responses for its `100`.
        var awaitsContinue = false
    }

    private(set) var owed: [Owed] = []
    /// A request's head was read and its end was not.
    private(set) var readingBody = false
    /// The parse failure's rejection waits for the requests before it to be answered.
    private var rejectionPending = false
    /// The parser failed: the connection closes once what is owed is answered, and no later
    /// response (the framework's own answer to the failure) goes out.
    private(set) var parserFailed = false
    /// A response with a body and no length (an event stream) is going out.
    private(set) var streaming = false

    // MARK: - Requests

    mutating func requestHead(version: HTTPVersion, keepAlive: Bool, isHead: Bool) {
        owed.append(Owed(version: version, keepAlive: keepAlive, isHead: isHead))
        readingBody = true
    }

    mutating func requestEnd() {
        readingBody = false
    }

    /// The request whose head was just read (`requestHead`) says `Expect: 100-continue`: whether
    /// it hears `100 Continue` now (nothing is owed before it). One that responses are owed before
    /// hears it when they have ended (`continueDue`). An HTTP/1.0 request's expectation is
    /// ignored (RFC 9110 10.1.1).
    mutating func expectsContinue(version: HTTPVersion) -> Bool {
        guard version == .http1_1, !parserFailed, !owed.isEmpty else { return false }
        if owed.count == 1 { return true }
        owed[owed.count - 1].awaitsContinue = true
        return false
    }

    /// The version of a `100 Continue` due now, after a response's end (`responseEnd`): the first
    /// owed request waits for one, and its body has not come yet (it is the one being read).
    mutating func continueDue() -> HTTPVersion? {
        guard let first = owed.first, first.awaitsContinue else { return nil }
        owed[0].awaitsContinue = false
        return owed.count == 1 && readingBody && !parserFailed ? first.version : nil
    }

    /// Whether the connection closes when its client closes its side: while a stream goes out.
    func closesOnInputClosed() -> Bool {
        streaming
    }

    /// What to do when the parser fails.
    enum Failure: Equatable {
        /// Nothing is owed: write the rejection and close.
        case answerNow
        /// The request being read lost the rest of its body: pass the error on to its handler
        /// (whose reading of the body fails with it); its answer closes the connection.
        case failRequest
        /// Requests read whole are being answered: the rejection follows them (`ResponseEnd`).
        case answerAfterOwed
        /// The failure was already handled (a parser that fails again): nothing more.
        case ignore
    }

    mutating func parserFailure() -> Failure {
        guard !parserFailed else { return .ignore }
        parserFailed = true
        if owed.isEmpty { return .answerNow }
        if readingBody { return .failRequest }
        // Only a client that kept the connection open for more reads the rejection.
        rejectionPending = owed.last?.keepAlive == true
        return .answerAfterOwed
    }

    // MARK: - Responses

    /// How a response head goes out.
    enum ResponseHead: Equatable {
        /// In `version`, with `Connection` set to `connection` when it is not nil.
        case send(version: HTTPVersion, connection: String?)
        /// Not at all: it answers no request (after a parse failure, the framework's own answer).
        case drop
    }

    /// A response head of `status`, with a length (`Content-Length`) or not.
    mutating func responseHead(status: Int, hasLength: Bool) -> ResponseHead {
        guard var request = owed.first else { return parserFailed ? .drop : .send(version: .http1_1, connection: nil) }
        let bodiless = request.isHead || status < 200 || status == 204 || status == 304
        if status >= 200 { streaming = !hasLength && !bodiless }
        // An HTTP/1.0 response without a length ends when the connection closes.
        if request.version == .http1_0, !hasLength, !bodiless { request.keepAlive = false }
        // The last answer before a parse failure closes the connection says so (unless the
        // rejection follows it, and says so itself).
        if parserFailed, owed.count == 1, !rejectionPending { request.keepAlive = false }
        owed[0] = request
        let connection: String? =
            if !request.keepAlive { "close" }
            else if request.version == .http1_0 { "keep-alive" }
            else { nil }
        return .send(version: request.version, connection: connection)
    }

    /// What to do once a response's end is written.
    enum ResponseEnd: Equatable {
        /// Nothing more: the connection stays open.
        case keepOpen
        /// Close once the end is flushed.
        case close
        /// Write the rejection of the bytes that followed, then close.
        case answerThenClose
        /// Not at all: it ends a response that was dropped.
        case drop
    }

    mutating func responseEnd() -> ResponseEnd {
        streaming = false
        guard !owed.isEmpty else { return parserFailed ? .drop : .keepOpen }
        let request = owed.removeFirst()
        if !request.keepAlive {
            rejectionPending = false  // nobody reads past this answer
            return .close
        }
        guard parserFailed, owed.isEmpty else { return .keepOpen }
        defer { rejectionPending = false }
        return rejectionPending ? .answerThenClose : .close
    }
}
