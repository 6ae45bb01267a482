import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs jobs one at a time, in order, on a thread of its own at the lowest CPU priority, so that
/// they use only CPU time that nothing else wants: followers' reads of the log run here, and
/// while writers keep both cores busy the followers fall behind instead of slowing the writers.
///
/// The thread starts with the first job and ends after `idleTimeout` (a second) without one.
final class IdleWorker: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        var isRunning = false
    }

    private let state = Mutex(State())
    /// Signalled once per job queued while the thread runs.
    private let queued = DispatchSemaphore(value: 0)

    /// How long the thread waits for a job before it ends.
    let idleTimeout: DispatchTimeInterval
    /// How many threads this worker has started (one at a time).
    let threadsStarted = Atomic(0)

    init(idleTimeout: DispatchTimeInterval = .seconds(1)) {
        self.idleTimeout = idleTimeout
    }

    func async(_ job: @escaping @Sendable () -> Void) {
        let start = state.withLock { state in
            state.jobs.append(job)
            defer { state.isRunning = true }
            return !state.isRunning
        }
        if start {
            startThread()
        } else {
            queued.signal()
        }
    }

    /// The thread's loop: every job queued, then a wait for more, until none comes in time.
    private func run(ownThread: Bool) {
        if ownThread { lowerPriority() }
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.next < state.jobs.count else {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                    return nil
                }
                defer { state.next += 1 }
                return state.jobs[state.next]
            }
            if let job {
                job()
                continue
            }
            if queued.wait(timeout: .now() + idleTimeout) == .timedOut {
                let stop = state.withLock { state in
                    if state.jobs.isEmpty { state.isRunning = false }
                    return !state.isRunning
                }
                if stop { return }
            }
        }
    }

    private func startThread() {
        threadsStarted.add(1, ordering: .relaxed)
        let context = Unmanaged.passRetained(self).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, nil, { context in
            let pointer: UnsafeMutableRawPointer? = context
            guard let pointer else { return nil }
            Unmanaged<IdleWorker>.fromOpaque(pointer).takeRetainedValue().run(ownThread: true)
            return nil
        }, context)
        guard result == 0 else {
            // No thread to be had: run the jobs on Dispatch instead, at normal priority.
            Unmanaged<IdleWorker>.fromOpaque(context).release()
            DispatchQueue.global().async { self.run(ownThread: false) }
            return
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
    }

    /// Nice 19 for this thread alone (on Linux a thread's nice value is its own); background
    /// quality of service on Darwin.
    private func lowerPriority() {
        #if canImport(Darwin)
        pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0)
        #else
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #endif
    }
}
