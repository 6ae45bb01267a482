import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension AnnouncementsClient {
    enum Method: String {
        case get = "GET", post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    /// A successful response: its body (remembered or received) and headers.
    struct Received {
        var data: Data
        var headers: [String: String]
        var status = 200
        /// The URL it answered, for errors about its body.
        var url: URL?

        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        func decode<Value: Decodable>(_ type: Value.Type) throws(ClientError) -> Value {
            do {
                return try JSONDecoder().decode(type, from: data)
            } catch let error as DecodingError {
                let failure = ClientError(decoding: error)
                guard case .invalidJSON(let detail) = failure else { throw failure }
                throw .invalidJSON(detail: "\(origin): \(detail)")
            } catch {
                throw .invalidJSON(detail: "\(origin): \(error)")
            }
        }

        /// Throws unless this is the API's answer to a delete: a 204 (every version's; `Log-Seq`
        /// came in 1.20.0). Another 2xx is someone else's (a captive portal's page, a proxy's),
        /// and the delete may never have reached the server: not a success to report.
        func checkDeleted() throws(ClientError) {
            guard status == 204 else {
                throw .unexpectedJSON(field: "", detail: "\(origin): a delete is answered 204; this is not the API's answer, and the announcement may not be deleted")
            }
        }

        /// What answered, in words: a body that is not JSON is most often someone else's (a
        /// captive portal's login page, a proxy's error page), which its Content-Type tells.
        private var origin: String {
            "the answer to \(url?.absoluteString ?? "the request") (\(status), Content-Type: \(header("Content-Type") ?? "none"))"
        }

        /// The announcement in the body, with the response's ETag as its revision.
        func announcement() throws(ClientError) -> Announcement {
            var announcement = try decode(Announcement.self)
            announcement.revision = header("ETag")
            return announcement
        }
    }

    /// Sends one request and returns a 2xx response (or one with a status in `accepting`), or
    /// throws what went wrong.
    /// With `cached`, a remembered ETag goes out as `If-None-Match` and a 304 returns what was remembered.
    /// A write goes with `key` as its `Idempotency-Key` (a fresh one when nil) and is sent again
    /// with it, up to `configuration.writeRetries` times, when the network fails under it or the
    /// answer is a 502, 503 or 504 (a proxy whose node died, a node that could not write or is
    /// full): the server answers a key it has seen with the first outcome, so a write that did
    /// land is not made twice. A write's `Log-Seq` is remembered for the reads after it (see `read`).
    func send(
        _ method: Method, path: String, query: [URLQueryItem] = [], body: (any Encodable)? = nil,
        ifMatch: String? = nil, key: String? = nil, version: APIVersion? = nil, cached: Bool = false, accepting: Set<Int> = []
    ) async throws(ClientError) -> Received {
        guard method != .get else {
            return try await read(path: path, query: query, version: version, cached: cached, accepting: accepting)
        }
        let key = key ?? UUID().uuidString
        // Encoded once for every attempt. A write's body holds only strings: encoding it cannot fail.
        let payload = body.flatMap { try? JSONEncoder().encode($0) }
        // Every attempt goes with the token the write was sent with: its key is that writer's
        // (the server refuses a key used by another), whatever `token` became meanwhile.
        let token = self.token
        let received = try await retrying(path, Self.retriedStatuses, networkFailures: true) { () async throws(ClientError) -> Received in
            try await attempt(method, path: path, token: token, payload: payload, ifMatch: ifMatch, version: version, key: key, accepting: Self.retriedStatuses)
        }
        guard !Self.retriedStatuses.contains(received.status) else { throw ClientError(status: received.status, body: received.data) }
        if let seq = received.header("Log-Seq").flatMap(Int.init) { writtenUpTo.withLock { $0 = max($0, seq) } }
        return received
    }

    /// Runs `attempt`, and again (up to `configuration.writeRetries` times) while it answers with
    /// one of `statuses` (after the answer's `Retry-After`, at most `longestRetryAfter`, spread by
    /// up to a quarter more (`Reconnection.spread`), or after
    /// `backoff`) or, with `networkFailures`, fails on the way (`isTransient`). Returns the
    /// last answer, which may still have one of `statuses`; throws the last failure. Cancelled
    /// while waiting, it throws what a cancelled request does (`unreachable`, `URLError.cancelled`,
    /// for `path`): the caller went away, whatever the last answer was.
    private func retrying(
        _ path: String, _ statuses: Set<Int>, networkFailures: Bool, _ attempt: () async throws(ClientError) -> Received
    ) async throws(ClientError) -> Received {
        var retries = 0
        while true {
            let outcome: Result<Received, ClientError>
            do throws(ClientError) { outcome = .success(try await attempt()) } catch { outcome = .failure(error) }
            let wait: Duration
            switch outcome {
            case .success(let received) where statuses.contains(received.status):
                wait = Self.retryAfter(received.header("Retry-After"), atMost: Self.longestRetryAfter).map(Reconnection.spread) ?? Self.backoff(after: retries)
            case .failure(.unreachable(_, let underlying)) where networkFailures && Self.isTransient(underlying):
                wait = Self.backoff(after: retries)
            default:
                return try outcome.get()
            }
            guard retries < configuration.writeRetries else { return try outcome.get() }
            retries += 1
            try? await Task.sleep(for: wait)
            if Task.isCancelled { throw .unreachable(url: configuration.baseURL.appendingPathComponent(path), underlying: URLError(.cancelled)) }
        }
    }

    /// The wait before sending a request again after `retries` retries: 0.5 s, doubled each time,
    /// at most 8 s, with up to half of it taken off at random (so that clients cut off together,
    /// by a node that died, do not come back in step). A dropped mobile link (a tunnel, a lift)
    /// outlasts a few milliseconds.
    static func backoff(after retries: Int) -> Duration {
        let full = min(Duration.milliseconds(500) * (1 << min(retries, 4)), .seconds(8))
        return full * Double.random(in: 0.5...1)
    }

    /// A read. One that fails on the way (`isTransient`) or is answered 502, 503 or 504 is sent
    /// again, as a write is (reads change nothing: no key needed). One of announcements (`cached`)
    /// after this client's writes sends the highest
    /// `Log-Seq` they were answered with as `Min-Seq` (and waits `minSeqWait` longer than
    /// `timeout`: a node that has not taken that seq in waits for it, then answers 503). After a
    /// 503 the read is sent again (after the `Retry-After`, at most 10 s, up to `writeRetries`
    /// times). When the server says that seq will not come (a 409: its log ends before it and no
    /// other node appends to it, as after a restore from an older backup), or a node is still
    /// behind after the retries (cut off from the others), the seq is forgotten (unless a later
    /// write raised it meanwhile) and the read sent again without it: reads answer with what the
    /// server has rather than fail. Other 409s and 503s are errors as for any read.
    private func read(path: String, query: [URLQueryItem], version: APIVersion?, cached: Bool, accepting: Set<Int>) async throws(ClientError) -> Received {
        let minSeq = cached ? writtenUpTo.withLock { $0 } : 0
        guard minSeq > 0 else { return try await fetch(path: path, query: query, version: version, cached: cached, accepting: accepting) }
        let received = try await fetch(path: path, query: query, version: version, cached: cached, minSeq: minSeq, accepting: accepting)
        guard received.status == 409 || received.status == 503, !accepting.contains(received.status) else { return received }
        guard Self.minSeq(answeredIn: received.data) == minSeq else { throw ClientError(status: received.status, body: received.data) }
        writtenUpTo.withLock { if $0 == minSeq { $0 = 0 } }
        return try await fetch(path: path, query: query, version: version, cached: cached, accepting: accepting)
    }

    /// A GET, sent again after a 502, 503 or 504 and after network failures (`retrying`). Returns
    /// a 2xx answer (or one with a status in `accepting`); with `minSeq`, also the 409 or the last
    /// 503 for the caller to read; throws any other.
    func fetch(
        path: String, query: [URLQueryItem], version: APIVersion?, cached: Bool, minSeq: Int? = nil, accepting: Set<Int>
    ) async throws(ClientError) -> Received {
        let statuses = Self.retriedStatuses.subtracting(accepting)
        let passed = accepting.union(statuses).union(minSeq == nil ? [] : [409])
        let token = self.token
        let received = try await retrying(path, statuses, networkFailures: true) { () async throws(ClientError) -> Received in
            try await attempt(.get, path: path, token: token, query: query, version: version, cached: cached, minSeq: minSeq, accepting: passed)
        }
        let forCaller = accepting.contains(received.status) || (minSeq != nil && [409, 503].contains(received.status))
        guard (200..<300).contains(received.status) || forCaller else { throw ClientError(status: received.status, body: received.data) }
        return received
    }

    /// The `Authorization` a request sends with `token`: none without one, and none for an empty
    /// one (an app's empty settings field), as `Bearer` without a token is a malformed request (400).
    static func authorization(_ token: String?) -> String? {
        guard let token, !token.isEmpty else { return nil }
        return "Bearer \(token)"
    }

    /// How much longer than `timeout` a read with `Min-Seq` may take: a node waits up to 5 s for
    /// the seq before it answers.
    static let minSeqWait: TimeInterval = 6

    /// How much longer than `timeout` a read the server may hold before it answers waits: one with
    /// `Min-Seq`, and a search, which waits for the search index (one with both, for both in
    /// turn); nil for any other.
    static func heldWait(minSeq: Bool, searching: Bool) -> TimeInterval? {
        let held = (minSeq ? minSeqWait : 0) + (searching ? searchWait : 0)
        return held > 0 ? held : nil
    }

    /// How much longer than `timeout` a search may take: the server holds one up to 10 s for the
    /// search index to cover its state (a first build after a start without a snapshot that
    /// holds it), then answers 503 with a `Retry-After`.
    static let searchWait: TimeInterval = 11

    /// The `minSeq` of an error body: the server's 409 and 503 about a `Min-Seq` name it.
    private static func minSeq(answeredIn data: Data) -> Int? {
        struct Body: Decodable { var minSeq: Int }
        return try? JSONDecoder().decode(Body.self, from: data).minSeq
    }

    /// The answers after which a write is sent again with its key.
    private static let retriedStatuses: Set<Int> = [502, 503, 504]

    /// The longest wait a `Retry-After` may ask of a write being retried: an app's user is waiting.
    static let longestRetryAfter: Duration = .seconds(10)

    /// A `Retry-After` header in seconds (not an HTTP date), at most `longest`.
    static func retryAfter(_ header: String?, atMost longest: Duration) -> Duration? {
        guard let header, let seconds = Int(header.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return min(.seconds(min(seconds, 1 << 30)), longest)
    }

    /// Failures after which a request may reach the server if sent again: all but a cancellation
    /// and those asking again cannot mend. (Linux reports a connection cut mid-answer as
    /// `badServerResponse` or `unknown`: a node that died is one of them.)
    static func isTransient(_ error: URLError) -> Bool {
        error.code != .cancelled && !permanentFailures.contains(error.code)
    }

    /// Network failures that asking again cannot mend: the URL, the system's rules, certificates.
    static let permanentFailures: Set<URLError.Code> = [
        .badURL, .unsupportedURL, .userAuthenticationRequired, .appTransportSecurityRequiresSecureConnection,
        .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
        .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired,
    ]

    /// One request, with `token` (the one the request was first sent with: see `token`).
    func attempt(
        _ method: Method, path: String, token: String?, query: [URLQueryItem] = [], payload: Data? = nil, ifMatch: String? = nil,
        version: APIVersion? = nil, cached: Bool = false, key: String? = nil, minSeq: Int? = nil, accepting: Set<Int> = []
    ) async throws(ClientError) -> Received {
        var components = URLComponents(url: configuration.baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        if !query.isEmpty {
            components?.queryItems = query
            // `URLComponents` leaves a `+` as it is, which the server (as any form's reader)
            // takes for a space: a search for "drill+" would become "drill ".
            let encoded = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            components?.percentEncodedQuery = encoded
        }
        guard let url = components?.url else {
            throw .unreachable(url: configuration.baseURL, underlying: URLError(.badURL))
        }
        let version = version ?? configuration.version
        var request = URLRequest(url: url)
        request.httpMethod = method.rawValue
        request.setValue(version.rawValue, forHTTPHeaderField: "Accept-Version")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        // Bodies of 1 KB or more come gzipped: a v1 page of 100 announcements takes 8 to 40% of
        // its bytes on a mobile link (BENCHMARKS.md).
        // URLSession decodes them, on Apple's systems and on Linux (where libcurl does it, and
        // would otherwise offer every coding it was built with).
        request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
        if let authorization = Self.authorization(token) { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        if let ifMatch { request.setValue(ifMatch, forHTTPHeaderField: "If-Match") }
        if let key { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
        if let minSeq { request.setValue(String(minSeq), forHTTPHeaderField: "Min-Seq") }
        if let held = Self.heldWait(minSeq: minSeq != nil, searching: query.contains { $0.name == "q" }) {
            request.timeoutInterval = Self.sessionInterval(configuration.timeout + held)
        }
        if method != .get {
            request.timeoutInterval = Self.sessionInterval(configuration.timeout + configuration.writeWait)
        }
        if let payload {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = payload
        }
        let cacheKey = cached ? "\(version.rawValue) \(url.absoluteString)" : nil
        let remembered = cacheKey.flatMap(cache.entry)
        if let remembered { request.setValue(remembered.etag, forHTTPHeaderField: "If-None-Match") }

        let data: Data, response: HTTPURLResponse
        do {
            let (received, urlResponse) = try await CancellableDataTask.data(for: request, on: session)
            guard let http = urlResponse as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            (data, response) = (received, http)
        } catch let error as URLError {
            throw .unreachable(url: url, underlying: error)
        } catch {
            throw .unreachable(url: url, underlying: URLError(.unknown))
        }
        cache.count(bytes: data.count, notModified: response.statusCode == 304 && remembered != nil)

        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { headers[name] = value }
        if response.statusCode == 304, let remembered { return remembered.response }
        switch response.statusCode {
        case let code where (200..<300).contains(code) || accepting.contains(code):
            let received = Received(data: data, headers: headers, status: code, url: url)
            // Only a representation is remembered: not an error answer taken as `accepting`.
            if (200..<300).contains(code), let cacheKey, let etag = received.header("ETag") { cache.remember(received, etag: etag, for: cacheKey) }
            return received
        case 300..<400 where response.statusCode != 304:
            throw ClientError(redirect: response.statusCode, location: response.value(forHTTPHeaderField: "Location"), from: url, base: configuration.baseURL)
        default:
            throw ClientError(status: response.statusCode, body: data)
        }
    }
}

extension ClientError {
    /// A redirect, which the client does not follow (`RedirectRefusal`): its status, with a
    /// message naming where it points (resolved against `url`, the request's), and, when it
    /// points to the same path under another address (http to https, another host), that
    /// address, to configure in place of `base`.
    init(redirect status: Int, location: String?, from url: URL, base: URL) {
        guard let location, let target = URL(string: location, relativeTo: url)?.absoluteURL else {
            self = .status(code: status, message: "the server answered a redirect without a valid Location; the client follows no redirect", fieldErrors: [])
            return
        }
        // Compared without their queries (a proxy may keep or drop them).
        func address(_ url: URL) -> String { String(url.absoluteString.prefix { $0 != "?" && $0 != "#" }) }
        let asked = address(url), pointed = address(target), root = address(base).hasSuffix("/") ? String(address(base).dropLast()) : address(base)
        let path = asked.hasPrefix(root) ? String(asked.dropFirst(root.count)) : nil
        let suggested = path.flatMap { path in !path.isEmpty && pointed.hasSuffix(path) ? String(pointed.dropLast(path.count)) : nil }
        let advice = suggested.map { "use \($0) as the server's address" } ?? "use the address it points to as the server's"
        self = .status(
            code: status,
            message: "the server redirects to \(target.absoluteString); the client follows no redirect (it would send the token and the request there): \(advice)",
            fieldErrors: []
        )
    }

    /// The error an error response stands for; `fallback` is the message when the body has none
    /// (it is not this API's), else the status's own words.
    init(status: Int, body data: Data, fallback: String? = nil) {
        struct ErrorBody: Decodable {
            var message: String
            var errors: [ClientError.FieldError]?
            /// A 409 of the feed: the position asked for (`after`, or the `Min-Seq` of a feed read
            /// in pages), and where the log ends.
            var after: Int?
            var minSeq: Int?
            var lastSeq: Int?
        }
        let body = try? JSONDecoder().decode(ErrorBody.self, from: data)
        // A body without the API's message is someone else's (a proxy, another program on the
        // port): said so, after the status's own words.
        let message = body?.message ?? fallback ?? HTTPURLResponse.localizedString(forStatusCode: status) + ClientError.foreignAnswer
        switch (status, body?.after ?? body?.minSeq, body?.lastSeq) {
        case (412, _, _): self = .changedBySomeoneElse(message: message)
        case (409, let after?, let lastSeq?): self = .positionBeyondLog(requested: after, lastSeq: lastSeq)
        default: self = .status(code: status, message: message, fieldErrors: body?.errors ?? [])
        }
    }
}
