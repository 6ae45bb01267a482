import AnnouncementsDomain
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
/// Jobs should hold locks shared with writers only briefly: a thread this low may be preempted
/// while it holds one.
final class IdleWorker: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var isRunning = false
    }

    private let state = Mutex(State())
    /// Signalled once per job queued while the thread runs.
    private let queued = DispatchSemaphore(value: 0)

    /// How long the thread waits for a job before it ends.
    let idleTimeout: DispatchTimeInterval
    /// Whether the thread runs at the lowest CPU priority (false: at normal priority, still on a
    /// thread of its own rather than Dispatch's, whose few threads Swift concurrency shares).
    let lowersPriority: Bool
    /// How many threads this worker has started (one at a time).
    let threadsStarted = Atomic(0)

    init(idleTimeout: DispatchTimeInterval = .seconds(1), lowersPriority: Bool = true) {
        self.idleTimeout = idleTimeout
        self.lowersPriority = lowersPriority
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
        if ownThread, lowersPriority { lowerPriority() }
        while true {
            // Everything queued so far, taken at once: nothing that has run stays in the queue.
            let jobs = state.withLock { state in
                var jobs: [@Sendable () -> Void] = []
                swap(&jobs, &state.jobs)
                return jobs
            }
            if !jobs.isEmpty {
                for job in jobs { job() }
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

    /// Whether no thread runs (for tests).
    var isIdle: Bool { state.withLock { !$0.isRunning } }

    private func startThread() {
        threadsStarted.add(1, ordering: .relaxed)
        #if canImport(Darwin) || canImport(Glibc)
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
        #else
        DispatchQueue.global().async { self.run(ownThread: false) }
        #endif
    }

    /// Nice 19 for this thread alone (on Linux a thread's nice value is its own); utility
    /// quality of service on Darwin (background would also throttle its reads of the log).
    private func lowerPriority() {
        #if canImport(Darwin)
        pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0)
        #elseif canImport(Glibc)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #endif
    }
}
