import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request's data task, cancelled with the Swift task that awaits it.
///
/// `URLSession.data(for:)` of swift-corelibs-foundation (through Swift 6.3) can deadlock when its
/// task is cancelled as the response completes: the cancellation handler runs under the Swift
/// task's status lock and takes the session's work queue, while the network thread holds the work
/// queue and resumes the awaiting task, which takes the status lock (swift-corelibs-foundation
/// #5412). Here the handler only records the cancellation; the data task is cancelled on another
/// thread, holding no lock of the Swift task.
final class CancellableDataTask: Sendable {
    /// Where the request stands; each transition answers what its caller must do.
    enum State: Sendable {
        case starting
        case running(URLSessionDataTask)
        case cancelled
        /// Cancelled before its data task started: answered already, by the awaiting call.
        case answered
        case finished

        /// The data task is made: whether to start it (not when cancelled first: then the call
        /// answers at once, and the data task's end answers nothing).
        mutating func start(_ task: URLSessionDataTask) -> Bool {
            guard case .starting = self else {
                if case .cancelled = self { self = .answered }
                return false
            }
            self = .running(task)
            return true
        }

        /// The awaiting task is cancelled: the data task to cancel, when one runs.
        mutating func cancel() -> URLSessionDataTask? {
            switch self {
            case .running(let task):
                self = .cancelled
                return task
            case .starting:
                self = .cancelled
                return nil
            case .cancelled, .answered, .finished:
                return nil
            }
        }

        /// The data task told its end: whether its answer is still owed.
        mutating func finish() -> Bool {
            defer { self = .finished }
            if case .answered = self { return false }
            return true
        }
    }

    private let state = Mutex(State.starting)

    private init() {}

    /// The response to `request` on `session`, or the error that ended it (`URLError(.cancelled)`
    /// when the awaiting task was cancelled).
    static func data(for request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let call = CancellableDataTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (answer: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    guard call.state.withLock({ $0.finish() }) else { return }
                    if error == nil, let response {
                        answer.resume(returning: (data ?? Data(), response))
                    } else {
                        answer.resume(throwing: error ?? URLError(.badServerResponse))
                    }
                }
                if call.state.withLock({ $0.start(task) }) {
                    task.resume()
                } else {
                    // Cancelled before it started: answered here (a data task that never loads,
                    // as one for a URL no protocol takes, may never tell its end), and the data
                    // task is ended, not dropped: a session keeps a task it made, its request and
                    // this handler, until it completes. Here no lock of the Swift task is held.
                    answer.resume(throwing: URLError(.cancelled))
                    task.cancel()
                }
            }
        } onCancel: {
            guard let task = call.state.withLock({ $0.cancel() }) else { return }
            DispatchQueue.global().async { task.cancel() }
        }
    }
}
