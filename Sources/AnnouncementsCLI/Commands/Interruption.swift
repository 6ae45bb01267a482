import Foundation
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
///
/// From a command's first registration on, those signals are caught: the handler only writes the
/// signal's number to a pipe, and a thread of its own reads it, removes what the cleanups
/// registered then name (newest first) and ends the process by the same signal, as it would have
/// ended without them (a shell sees it: 130, 143, and a script's loop stops). It holds the
/// registrations' lock until then, and a file is made under that lock with its cleanup
/// (`cleaningUp(after:with:_:)`): an interrupt finds a file with its cleanup, or neither. What
/// the command's own thread says after the interrupt (a copy whose file was just removed cannot
/// be named) is not printed (`Output.silence()`). Nothing changes for a command that registers
/// nothing.
enum Interruption {
    private struct State {
        var next = 0
        var cleanups: [(id: Int, run: @Sendable () -> Void)] = []
        var isInstalled = false
    }

    private static let state = Mutex(State())
    /// The pipe's end the signal handler writes to (set before the handler is installed).
    private static let signalled = Atomic<Int32>(-1)
    private static let signals = [SIGINT, SIGTERM]

    /// Runs `body` with `cleanup` registered: `cleanup` runs when `body` throws, or when an
    /// interrupt comes meanwhile (then the cleanups registered before it run too, and the process
    /// ends); it is dropped once `body` returns.
    static func cleaningUp<Result>(
        with cleanup: @escaping @Sendable () -> Void, _ body: () async throws(CLIError) -> Result
    ) async throws(CLIError) -> Result {
        try await cleaningUp(after: {}, with: cleanup) { _ async throws(CLIError) in try await body() }
    }

    /// `cleaningUp(with:_:)` for what `make` makes (a file), made and registered with `cleanup` in
    /// one step, then given to `body`.
    static func cleaningUp<Made, Result>(
        after make: () throws(CLIError) -> sending Made,
        with cleanup: @escaping @Sendable () -> Void,
        _ body: (Made) async throws(CLIError) -> Result
    ) async throws(CLIError) -> Result {
        let (id, made) = try state.withLock { state throws(CLIError) -> sending (Int, Made) in
            if !state.isInstalled {
                install()
                state.isInstalled = true
            }
            let made = try make()
            state.next += 1
            state.cleanups.append((state.next, cleanup))
            return (state.next, made)
        }
        defer { state.withLock { $0.cleanups.removeAll { $0.id == id } } }
        do throws(CLIError) {
            return try await body(made)
        } catch {
            cleanup()
            throw error
        }
    }

    /// Catches the signals: a pipe, the thread that reads it, and a handler that writes to it (a
    /// write is safe in a signal handler; little else is).
    private static func install() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        signalled.store(ends[1], ordering: .sequentiallyConsistent)
        let reading = ends[0]
        Thread { interrupted(reading) }.start()
        for number in signals {
            signal(number) { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(Interruption.signalled.load(ordering: .relaxed), &byte, 1)
            }
        }
    }

    /// Waits for a signal's number on `pipe`; then runs the cleanups, holding the lock (no file
    /// is made after them), and ends the process by that signal.
    private static func interrupted(_ pipe: Int32) {
        var byte: UInt8 = 0
        while read(pipe, &byte, 1) != 1 {
            guard errno == EINTR else { return }
        }
        let number = Int32(byte)
        state.withLock { state in
            Output.silence()
            for cleanup in state.cleanups.reversed() { cleanup.run() }
            Output.clearProgress()
            Output.standardError("note: interrupted\(state.cleanups.isEmpty ? "" : "; what it had not finished writing is removed")\n")
            // Ended by the signal itself: its default action, unblocked on this thread.
            signal(number, SIG_DFL)
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, number)
            pthread_sigmask(SIG_UNBLOCK, &only, nil)
            raise(number)
            // (Not reached: the default action of both signals ends the process.)
            _exit(128 + number)
        }
    }
}
