import AnnouncementsDomain
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command's text goes: results on stdout, errors and notes on stderr.
enum Output {
    static func line(_ text: String) {
        print(text)
    }

    /// `error: …` on stderr, one line, after what stdout holds: the message is escaped, for it may
    /// quote the log or a server. A command that logs as JSON (`logErrors(to:)`) logs it instead,
    /// at `critical`: a log pipeline reads one JSON object per line, the last one too.
    static func error(_ text: String) {
        guard !silenced.load(ordering: .sequentiallyConsistent) else { return }
        flushStandardOutput()
        clearProgress()
        if let logger = errorLog.withLock({ $0 }) {
            logger.critical("\(text)")
        } else {
            standardError("error: \(VisibleText.escaped(text))\n")
        }
    }

    private static let errorLog = Mutex<Logger?>(nil)

    /// Sends `error`'s lines to `logger` from now on.
    static func logErrors(to logger: Logger) {
        errorLog.withLock { $0 = logger }
    }

    /// `note: …` on stderr, one line, after what stdout holds, escaped as an error is.
    static func note(_ text: String) {
        guard !silenced.load(ordering: .sequentiallyConsistent) else { return }
        flushStandardOutput()
        clearProgress()
        standardError("note: \(VisibleText.escaped(text))\n")
    }

    /// Whether errors and notes are no longer printed (`silence()`).
    private static let silenced = Atomic<Bool>(false)

    /// No error or note is printed from now on: the process is ending on an interrupt, and what
    /// its command fails with because of it (a copy whose file was just removed) is not news.
    static func silence() {
        silenced.store(true, ordering: .sequentiallyConsistent)
    }

    /// Whether a progress line is on stderr (drawn, and not cleared since): an error or a note
    /// that a read ends or interrupts with takes its place, on a line of its own.
    private static let progressShown = Atomic<Bool>(false)

    static func clearProgress() {
        if progressShown.exchange(false, ordering: .relaxed) { standardError("\r\u{1B}[K") }
    }

    /// Writes what stdout holds. In a pipe or a file stdout is buffered, and a report followed by
    /// its error (`verify`) would otherwise come out error first where both go to one file
    /// (`verify > report.txt 2>&1`). A reader of stdout that left (`verify | head -1`) does not stop
    /// this flush with SIGPIPE before the error is written: the next write to stdout does. (Errors
    /// and notes come from the command's own thread, one at a time.)
    private static func flushStandardOutput() {
        let previous = signal(SIGPIPE, SIG_IGN)
        fflush(nil)
        signal(SIGPIPE, previous)
    }

    /// Writes to stderr unbuffered, so that progress shows as it happens.
    static func standardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// A progress reporter for long reads, drawn on stderr when it is a terminal; nil otherwise.
    /// Drawn for files past `ANNOUNCEMENTS_PROGRESS_BYTES` (default 64 MiB: smaller ones are read
    /// before anyone could read a percentage).
    static func progress(label: String) -> ((Int64, Int64) -> Void)? {
        guard stderrIsTerminal else { return nil }
        let threshold = ProcessInfo.processInfo.environment["ANNOUNCEMENTS_PROGRESS_BYTES"].flatMap(Int64.init) ?? 64 << 20
        return { done, total in
            guard total > threshold else { return }
            let percent = min(100, Int(done * 100 / max(total, 1)))
            standardError("\r\(label) \(percent)% (\(done >> 20) of \(total >> 20) MiB)\u{1B}[K")
            progressShown.store(true, ordering: .relaxed)
            if done >= total { clearProgress() }
        }
    }

    /// `value` as `count` writes it, and `noun`, plural unless `value` is 1: `1 event`, `2,048 events`.
    static func count(_ value: Int, _ noun: String) -> String {
        "\(count(value)) \(noun)\(value == 1 ? "" : "s")"
    }

    /// A count with thousands separators: 1,234,567.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }
}
