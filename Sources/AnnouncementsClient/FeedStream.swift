import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One connection to the event stream: a URLSession data task whose chunks are read with `next()`,
/// one at a time. What arrives faster than it is read waits here, up to `highWater` bytes: past
/// that the task is paused (the server's writes then wait on the connection) until reading brings
/// it down to `lowWater`. A response other than 200 ends it with the `FeedRefusal` its body stands
/// for; a 200 that is not an event stream with `badEventStream`.
final class FeedStream: NSObject, URLSessionDataDelegate, Sendable {
    /// Above this many bytes received and not read, the connection is paused.
    static let highWater = 1 << 20
    /// Reading down to this many bytes lets the connection go on.
    static let lowWater = 256 << 10

    private struct State {
        /// Chunks received and not read yet, from `first` on.
        var chunks: [Data] = []
        var first = 0
        var bytes = 0
        var paused = false
        /// How the response ended (nil: it goes on), once it has.
        var end: Result<Void, any Error>?
        /// A reader waiting for the next chunk.
        var waiter: CheckedContinuation<Data?, any Error>?
        /// The task, once it told its first callback.
        var task: URLSessionDataTask?
    }

    private let state = Mutex(State())
    /// The status, `Retry-After`, `Location` and body so far of a response that did not open a stream.
    private let refusal = Mutex<(status: Int, retryAfter: Duration?, location: String?, body: Data)?>(nil)
    /// More of a refusal's body than this is not read: an API error is a few hundred bytes.
    private static let refusalLimit = 64 << 10
    private let session = Mutex<URLSession?>(nil)
    /// The client's base URL, for the address a redirect suggests.
    private let base: URL

    /// Opens the connection for `request`, a request of the client whose base URL is `base`.
    init(_ request: URLRequest, base: URL) {
        self.base = base
        super.init()
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: nil)
        self.session.withLock { $0 = session }
        session.dataTask(with: request).resume()
    }

    /// The next chunk received; nil once the stream ended (or was closed, or the reading task
    /// was cancelled). Throws how the response failed.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Data?, any Error>) in
                let answer = state.withLock { state -> Result<Data?, any Error>? in
                    if state.first < state.chunks.count {
                        let chunk = state.chunks[state.first]
                        state.first += 1
                        state.bytes -= chunk.count
                        if state.first == state.chunks.count {
                            state.chunks.removeAll(keepingCapacity: true)
                            state.first = 0
                        }
                        if state.paused, state.bytes <= Self.lowWater {
                            state.paused = false
                            state.task?.resume()
                        }
                        return .success(chunk)
                    }
                    switch state.end {
                    case .success?: return .success(nil)
                    case .failure(let error)?: return .failure(error)
                    case nil:
                        state.waiter = waiter
                        return nil
                    }
                }
                if let answer { waiter.resume(with: answer) }
            }
        } onCancel: {
            close()
        }
    }

    /// Ends the stream: `next()` answers nil, and the connection is cancelled on another thread.
    /// (The cancellation handler of `next()` calls this under the Swift task's status lock, and
    /// the session's `invalidateAndCancel()` takes its work queue, which a network thread may hold
    /// while it resumes that task: the lock-order deadlock of swift-corelibs-foundation #5412.)
    func close() {
        finish(.success(()))
        guard let session = session.withLock({ $0.take() }) else { return }
        DispatchQueue.global().async { session.invalidateAndCancel() }
    }

    /// The bytes received and not read yet.
    var bufferedBytes: Int { state.withLock { $0.bytes } }

    /// Whether the stream ended (closed, or the response over).
    var hasEnded: Bool { state.withLock { $0.end != nil } }

    /// Ends the stream with `end` (the first end stands), waking a waiting reader.
    private func finish(_ end: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = end
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: end.map { nil })
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        state.withLock { $0.task = dataTask }
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            // Read its body (the API's error says why) before finishing.
            let retryAfter = AnnouncementsClient.retryAfter(http.value(forHTTPHeaderField: "Retry-After"), atMost: EventStreamParser.longestRetry)
            refusal.withLock { $0 = (http.statusCode, retryAfter, http.value(forHTTPHeaderField: "Location"), Data()) }
        } else if let http = response as? HTTPURLResponse,
                  http.value(forHTTPHeaderField: "Content-Type")?.lowercased().hasPrefix("text/event-stream") != true {
            let type = http.value(forHTTPHeaderField: "Content-Type") ?? "none"
            finish(.failure(ClientError.badEventStream(
                detail: "GET /events answered 200 with Content-Type \(type), not text/event-stream: check that the URL is this API's (a login page of the network?)"
            )))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let isRefusal = refusal.withLock { refusal -> Bool in
            guard let room = refusal.map({ Self.refusalLimit - $0.body.count }) else { return false }
            refusal?.body.append(data.prefix(max(0, room)))
            return true
        }
        guard !isRefusal else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            state.task = dataTask
            guard state.end == nil else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.chunks.append(data)
            state.bytes += data.count
            if !state.paused, state.bytes > Self.highWater {
                state.paused = true
                dataTask.suspend()
            }
            return nil
        }
        waiter?.resume(returning: data)
    }

    /// No redirect is followed (as `RedirectRefusal` says): it ends the stream as a refusal.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let refused = refusal.withLock({ $0 }) {
            let fallback = "GET /events did not open an event stream; check that the URL is this API's"
            let error = (300..<400).contains(refused.status) && refused.status != 304
                ? ClientError(redirect: refused.status, location: refused.location, from: task.originalRequest?.url ?? base, base: base)
                : ClientError(status: refused.status, body: refused.body, fallback: fallback)
            finish(.failure(FeedRefusal(error: error, retryAfter: refused.retryAfter, answeredBytes: refused.body.count)))
        } else if let error {
            // A failure, whatever its type: `isPassing` decides whether to ask again.
            let url = task.originalRequest?.url ?? base
            finish(.failure(FeedRefusal(error: .unreachable(url: url, underlying: error as? URLError ?? URLError(.unknown)))))
        } else {
            finish(.success(()))
        }
    }
}
