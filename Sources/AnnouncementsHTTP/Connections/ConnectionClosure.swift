import NIOCore
import Synchronization

/// Whether a request's connection has closed, for a response that outlives its request (an event
/// stream): the stream's task, waiting for events, learns here that its client left at once, not
/// at its next write (a heartbeat away). A plain state, open (with the task that waits, if one
/// does) or closed, driven by the connection's `closeFuture` and by the waiting task's
/// cancellation.
final class ConnectionClosure: Sendable {
    private enum State {
        case open(waiting: CheckedContinuation<Void, Never>?)
        case closed
    }

    private let state = Mutex(State.open(waiting: nil))

    /// Follows `closeFuture`, a connection's; nil for a request without one (a test's router),
    /// which never closes.
    init(_ closeFuture: EventLoopFuture<Void>?) {
        closeFuture?.whenComplete { [weak self] _ in self?.close() }
    }

    var isClosed: Bool {
        state.withLock { if case .closed = $0 { true } else { false } }
    }

    /// Returns once the connection has closed, or when the calling task is cancelled. One task
    /// waits at a time.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked and stored under the lock: a cancellation after the check finds the
                // continuation stored.
                let resumeNow = state.withLock { state -> Bool in
                    guard case .open = state, !Task.isCancelled else { return true }
                    state = .open(waiting: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .open(let waiting?) = state else { return nil }
                state = .open(waiting: nil)
                return waiting
            }?.resume()
        }
    }

    private func close() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard case .open(let waiting) = state else { return nil }
            state = .closed
            return waiting
        }?.resume()
    }
}
