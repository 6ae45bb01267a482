import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run, started with `posix_spawn`, with the parts of Foundation's `Process`
/// they use. Not `Process` itself: in Swift 6.3.1, swift-corelibs-foundation's `Process.run()`
/// reads each `/proc/self/fd` entry as a whole 256-byte `dirent` and now and then reads past a
/// mapped page, crashing the test process (swiftlang/swift-corelibs-foundation#5472, fixed after
/// 6.3.1); it crashed one `make test` in this project's eleventh session.
final class ChildProcess: Sendable {
    enum TerminationReason: Sendable { case exit, uncaughtSignal }

    /// Where one of the child's standard streams goes.
    enum Stream {
        /// A pipe, whose other end the test reads (or, for input, writes).
        case pipe
        case null
        /// A file, created (or emptied) for it.
        case file(String)
        /// A pipe whose reading end is closed before the child starts: each write fails (EPIPE),
        /// and raises SIGPIPE unless the child ignores it.
        case closedPipe
    }

    let processIdentifier: pid_t
    /// The test's ends of the pipes asked for (closed with this object; the input's by `send`).
    private let inputEnd: Mutex<Int32?>
    let output: Int32?
    let error: Int32?
    /// The child's wait status, once it has been reaped. Reaping happens under its lock, and so do
    /// signals: a signal never reaches a pid reaped and perhaps reused by another process.
    private let status = Mutex<Int32?>(nil)

    /// Spawns one child at a time: between its pipes' creation and their close-on-exec flag no
    /// other child may be spawned, or it would hold their ends open.
    private static let spawning = Mutex(())

    /// Runs `executable` with `arguments` and exactly `environment`, in `directory` (through
    /// `/bin/sh -c 'cd …'`), with its signals' dispositions and mask reset to the defaults.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String], directory: String? = nil,
        input: Stream = .null, output: Stream = .pipe, error: Stream = .pipe
    ) throws {
        var program = executable
        var argv = [executable] + arguments
        if let directory {
            program = "/bin/sh"
            argv = ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, directory, executable] + arguments
        }
        let envp = environment.map { "\($0.key)=\($0.value)" }
        let (pid, ends) = try Self.spawning.withLock { _ in
            try Self.spawn(program, argv: argv, envp: envp, streams: [input, output, error])
        }
        processIdentifier = pid
        inputEnd = Mutex(ends[0])
        (self.output, self.error) = (ends[1], ends[2])
    }

    deinit {
        for fd in [inputEnd.withLock { $0 }, output, error] { if let fd { close(fd) } }
    }

    /// A write to a child that has ended is an error (EPIPE), not a signal that ends the tests.
    private static let pipeSignalIgnored: Void = {
        #if canImport(Glibc)
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        #else
        _ = Darwin.signal(SIGPIPE, SIG_IGN)
        #endif
    }()

    #if canImport(Glibc)
    /// Has the child close every descriptor from 3 on: glibc's `posix_spawn_file_actions_addclosefrom_np`
    /// (2.34 and later; Swift's Glibc module does not declare it), else every descriptor of this
    /// process marked close-on-exec first.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
    }
    #endif

    /// Spawns the child; returns its pid and, per stream, the test's end of its pipe.
    private static func spawn(_ program: String, argv: [String], envp: [String], streams: [Stream]) throws -> (pid_t, [Int32?]) {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        var ours: [Int32?] = []
        var theirs: [Int32] = []
        defer { for fd in theirs { close(fd) } }
        for (target, stream) in streams.enumerated() {
            let target = Int32(target)
            switch stream {
            case .pipe, .closedPipe:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else {
                    let code = errno
                    for fd in ours { if let fd { close(fd) } }
                    throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EMFILE)
                }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                // The child reads its input from the read end (0), writes output to the write end (1).
                let (child, parent) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                theirs.append(child)
                if case .closedPipe = stream {
                    // Closed before the child starts: none of its writes has a reader.
                    close(parent)
                    ours.append(nil)
                } else {
                    ours.append(parent)
                }
                posix_spawn_file_actions_adddup2(&actions, child, target)
            case .null:
                ours.append(nil)
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0)
            case .file(let path):
                ours.append(nil)
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            }
        }
        // Nothing of the test process's but the three streams. A copy of a socket in the child
        // outlives its close here, and an open file description that another process still holds
        // stays in this process's epoll sets (libdispatch's, under URLSession) after its close:
        // its events went on coming under a number since reused, and a URLSession request of a
        // test never read the answer waiting on its socket (the test hung, the child server
        // holding 700 of the test process's sockets).
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        #if canImport(Glibc)
        closeFrom3(&actions)
        #else
        flags |= POSIX_SPAWN_CLOEXEC_DEFAULT
        #endif
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var pid: pid_t = 0
        let result = withCStrings(argv) { argv in
            withCStrings(envp) { envp in posix_spawn(&pid, program, &actions, &attributes, argv, envp) }
        }
        guard result == 0 else {
            for fd in ours { if let fd { close(fd) } }
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .ENOENT)
        }
        return (pid, ours)
    }

    /// Whether the child has not ended yet (reaping it if it has).
    var isRunning: Bool {
        status.withLock { status in
            reap(&status)
            return status == nil
        }
    }

    /// Waits for the child to end, on this thread: without reaping it (`WNOWAIT`), then reaps it
    /// under the lock.
    func waitUntilExit() {
        while status.withLock({ $0 }) == nil {
            var info = siginfo_t()
            let waited = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT)
            if waited < 0, errno == EINTR { continue }
            status.withLock { reap(&$0) }
            if waited < 0 { usleep(10_000) }
        }
    }

    /// Takes the child's status if it has ended and nobody took it yet; call with the lock held.
    private func reap(_ status: inout Int32?) {
        guard status == nil else { return }
        var raw: Int32 = 0
        if waitpid(processIdentifier, &raw, WNOHANG) == processIdentifier { status = raw }
    }

    func terminate() { signal(SIGTERM) }
    func interrupt() { signal(SIGINT) }

    /// Sends `signal`, unless the child has ended: an ended child not reaped yet is reaped first,
    /// so the pid is still its own when `kill` runs.
    func signal(_ signal: Int32) {
        status.withLock { status in
            reap(&status)
            if status == nil { kill(processIdentifier, signal) }
        }
    }

    /// How it ended (once `waitUntilExit` returned): its exit status, or the signal that ended it.
    var terminationStatus: Int32 {
        let raw = status.withLock { $0 } ?? 0
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }

    var terminationReason: TerminationReason {
        (status.withLock { $0 } ?? 0) & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// Writes all of `bytes` to the child's input pipe, then closes it.
    func send(_ bytes: [UInt8]) {
        guard let input = inputEnd.withLock({ end in defer { end = nil }; return end }) else { return }
        Self.pipeSignalIgnored
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { break }
            sent += result
        }
        close(input)
    }
}

/// Everything `fd` gives until its end.
func readToEnd(_ fd: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { continue }
        guard count > 0 else { return data }
        data.append(contentsOf: buffer[..<count])
    }
}

/// The next byte `fd` gives; nil at its end.
func readByte(_ fd: Int32) -> UInt8? {
    var byte: UInt8 = 0
    while true {
        let count = read(fd, &byte, 1)
        if count < 0, errno == EINTR { continue }
        return count == 1 ? byte : nil
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
