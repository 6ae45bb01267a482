import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What an interrupt (Ctrl-C's SIGINT, or SIGTERM) must not leave behind: the unfinished files a
/// command writes (`export`'s and `backup`'s copies), which a second try would find in its way.
/// While a command writes them, those signals are taken over: each cleanup registered is run,
/// newest first, then the process exits with 128 + the signal's number (130, 143), as a shell
/// reports a process the signal ended. (It exits rather than raising the signal again:
/// libdispatch's signal sources hold the signal blocked.) What the command's own thread says
/// after the interrupt (a copy whose file was just removed cannot be named) is not printed.
/// Nothing changes for a command that registers nothing.
enum Interruption {
    private struct State {
        var next = 0
        var cleanups: [(id: Int, run: @Sendable () -> Void)] = []
        /// The signals' sources, made at the first registration and kept: a signal that comes
        /// between two registrations still ends the process.
        var sources: [any DispatchSourceSignal] = []
    }

    private static let state = Mutex(State())
    /// Whether an interrupt came (then errors and notes are no longer printed: `Output`).
    static let happened = Atomic<Bool>(false)
    private static let signals = [SIGINT, SIGTERM]

    /// Runs `body`; an interrupt meanwhile runs `cleanup` (then the cleanups registered before it)
    /// and ends the process.
    static func cleaningUp<Result>(
        with cleanup: @escaping @Sendable () -> Void, _ body: () async throws(CLIError) -> Result
    ) async throws(CLIError) -> Result {
        let id = register(cleanup)
        defer { state.withLock { $0.cleanups.removeAll { $0.id == id } } }
        return try await body()
    }

    private static func register(_ cleanup: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            if state.sources.isEmpty {
                state.sources = signals.map { number in
                    // Ignored as a signal, so that only the source hears it: its handler runs on a
                    // queue, not in a signal handler, and may remove files and write.
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                    source.setEventHandler { interrupted(by: number) }
                    source.resume()
                    return source
                }
            }
            state.next += 1
            state.cleanups.append((state.next, cleanup))
            return state.next
        }
    }

    private static func interrupted(by number: Int32) {
        happened.store(true, ordering: .sequentiallyConsistent)
        let cleanups = state.withLock { state in
            defer { state.cleanups = [] }
            return state.cleanups.reversed().map(\.run)
        }
        for cleanup in cleanups { cleanup() }
        Output.clearProgress()
        Output.standardError("note: interrupted\(cleanups.isEmpty ? "" : "; what was being written is removed")\n")
        _exit(128 + number)
    }
}
