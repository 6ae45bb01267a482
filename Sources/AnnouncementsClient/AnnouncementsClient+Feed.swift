import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One event from the server's feed: a line of its log.
public struct FeedEvent: Sendable, Hashable {
    /// Its position in the log.
    public var seq: Int
    /// `created`, `edited` or `deleted`.
    public var type: String
    /// The log line, exactly as stored (JSON: `seq`, `type`, `id`, `at`, `by`, `data`, …), for a
    /// client whose token is an auditor's or an admin's; for any other, its public form, JSON with
    /// `seq`, `type`, `id` (the announcement's) and `at` only.
    public var line: String
}

extension AnnouncementsClient {
    /// The server's events after `seq`, then each new one as it is appended, for as long as the
    /// sequence is iterated. When the connection drops it reconnects (after `retryDelay`) with
    /// `Last-Event-ID`, so no event is missed or repeated. It ends when the iterating task is
    /// cancelled, or with a `ClientError` when the server refuses the feed: among them
    /// `positionBeyondLog` when the server's log ends before the position asked for (restored
    /// from an older backup), which no reconnection can mend.
    public func events(after seq: Int = 0, retryDelay: Duration = .seconds(1)) -> AsyncThrowingStream<FeedEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var last = seq
                while !Task.isCancelled {
                    do {
                        try await follow(after: last) { event in
                            last = event.seq
                            continuation.yield(event)
                        }
                    } catch let error as ClientError {
                        // The network, a restarting server or a busy proxy: try again. Anything
                        // else (401, 404, 406…) will not change by retrying.
                        switch error {
                        case .unreachable: break
                        case .status(let code, _, _) where code >= 500 || code == 429: break
                        default:
                            continuation.finish(throwing: error)
                            return
                        }
                    } catch {}
                    try? await Task.sleep(for: max(retryDelay, .milliseconds(10)))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The server's stored events after `seq`, oldest first: at most `limit` (the server sends
    /// at most 1000 at once), none when no event came after `seq` yet. Throws
    /// `positionBeyondLog` when the server's log ends before `seq` (it was restored from an older
    /// backup): read again after the `lastSeq` it names, or from 0.
    public func eventPage(after seq: Int = 0, limit: Int = 100) async throws(ClientError) -> [FeedEvent] {
        let query = [URLQueryItem(name: "after", value: String(seq)), URLQueryItem(name: "limit", value: String(limit))]
        return try FeedPage.events(in: try await send(.get, path: "events", query: query))
    }

    /// One connection to the stream: delivers its events until it ends.
    private func follow(after seq: Int, _ deliver: (FeedEvent) -> Void) async throws {
        var request = URLRequest(url: configuration.baseURL.appendingPathComponent("events"))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        request.setValue(configuration.version.rawValue, forHTTPHeaderField: "Accept-Version")
        request.setValue(String(seq), forHTTPHeaderField: "Last-Event-ID")
        // An auditor's (or an admin's) token gets the full lines; without one, the public form.
        if let token = configuration.token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        // Longer than the server's 15-second heartbeat, so an idle stream is not taken for a dead one.
        request.timeoutInterval = max(configuration.timeout, 45)
        let chunks = StreamDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: chunks, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        session.dataTask(with: request).resume()
        var parser = EventStreamParser()
        for try await chunk in chunks.stream {
            for event in parser.feed(chunk) { deliver(event) }
        }
    }
}

/// Turns a URLSession data task's callbacks into an async sequence of received chunks; a response
/// other than 200 ends it with the `ClientError` its body stands for.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let stream: AsyncThrowingStream<Data, any Error>
    private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
    /// The status and body so far of a response that did not open a stream.
    private let refusal = Mutex<(status: Int, body: Data)?>(nil)
    /// More of a refusal's body than this is not read: an API error is a few hundred bytes.
    private static let refusalLimit = 64 << 10

    override init() {
        (stream, continuation) = AsyncThrowingStream.makeStream()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            // Read its body (the API's error says why) before finishing.
            refusal.withLock { $0 = (http.statusCode, Data()) }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let isRefusal = refusal.withLock { refusal -> Bool in
            guard let room = refusal.map({ Self.refusalLimit - $0.body.count }) else { return false }
            refusal?.body.append(data.prefix(max(0, room)))
            return true
        }
        if !isRefusal { continuation.yield(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let refused = refusal.withLock({ $0 }) {
            let fallback = "GET /events did not open an event stream; check that the URL is this API's"
            continuation.finish(throwing: ClientError(status: refused.status, body: refused.body, fallback: fallback))
        } else if let error = error as? URLError, let url = task.originalRequest?.url {
            continuation.finish(throwing: ClientError.unreachable(url: url, underlying: error))
        } else {
            continuation.finish()
        }
    }
}

/// Reads `text/event-stream`: blocks separated by a blank line, with `id:`, `event:` and `data:`
/// fields; comment lines (`:`) are heartbeats.
struct EventStreamParser {
    private var pending = Data()
    /// How far `pending` has been searched for a blank line without finding one.
    private var searched = 0

    /// The events completed by `chunk`. Each byte is searched once, and what the events used is
    /// dropped once per chunk, so a long backlog costs time in proportion to its length.
    mutating func feed(_ chunk: Data) -> [FeedEvent] {
        pending.append(chunk)
        var events: [FeedEvent] = []
        let separator = Data("\n\n".utf8)
        var start = pending.startIndex
        // A separator may straddle the old end: look again from one byte before it.
        var from = max(start, pending.startIndex + searched - 1)
        while let end = pending.range(of: separator, in: from..<pending.endIndex) {
            if let event = Self.event(in: String(decoding: pending[start..<end.lowerBound], as: UTF8.self)) {
                events.append(event)
            }
            start = end.upperBound
            from = start
        }
        pending.removeSubrange(pending.startIndex..<start)
        searched = pending.count
        return events
    }

    /// The event in one block; nil for a block without an `id:` (a heartbeat, a comment).
    private static func event(in block: String) -> FeedEvent? {
        var seq: Int?, type = "message", data: [Substring] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("id:") { seq = Int(line.dropFirst(3).trimmingCharacters(in: .whitespaces)) }
            if line.hasPrefix("event:") { type = line.dropFirst(6).trimmingCharacters(in: .whitespaces) }
            if line.hasPrefix("data:") { data.append(line.dropFirst(line.hasPrefix("data: ") ? 6 : 5)) }
        }
        return seq.map { FeedEvent(seq: $0, type: type, line: data.joined(separator: "\n")) }
    }
}
