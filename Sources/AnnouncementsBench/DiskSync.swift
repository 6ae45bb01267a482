#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The disk's own rate, with no store in the way: a loop that writes a batch of lines to a file
/// and syncs it (`fdatasync`; `F_FULLFSYNC` on Darwin, where `fsync` does not reach the disk),
/// then the next batch. With one line per batch it is the ceiling of a durable writer that syncs
/// each write alone; with the lines a store puts in each of its syncs, the ceiling at that batch
/// size. `AppendBenchmark` and `AnnouncementsBench fsync` both measure with it, so their figures
/// come from the same loop.
struct DiskSync {
    /// The file written, in the folder on the disk being measured; removed afterwards.
    var path: String
    /// Lines written before each sync.
    var linesPerSync: Int
    /// Each line's size in bytes, its newline included (1,100: an announcement's log line).
    var lineBytes = 1100

    /// What one run of the loop did.
    struct Result {
        /// Lines written and synced.
        var lines: Int
        /// How long the loop ran.
        var elapsed: Duration
        /// Each write-and-sync's duration, sorted.
        var latencies: [Duration]

        /// Lines per second.
        var linesPerSecond: Double { Double(lines) / elapsed.seconds }
        /// Syncs per second.
        var syncsPerSecond: Double { Double(latencies.count) / elapsed.seconds }
        /// The median write-and-sync.
        var median: Duration { latencies.isEmpty ? .zero : latencies[latencies.count / 2] }
    }

    /// Writes and syncs batches for `duration` (at least one), then removes the file.
    func run(for duration: Duration) throws -> Result {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError.system("open", path: path) }
        defer {
            close(fd)
            unlink(path)
        }
        let count = max(1, linesPerSync)
        var batch = [UInt8](repeating: UInt8(ascii: "x"), count: count * lineBytes)
        for line in 1...count { batch[line * lineBytes - 1] = UInt8(ascii: "\n") }
        let clock = ContinuousClock()
        let start = clock.now
        var latencies: [Duration] = []
        repeat {
            let before = clock.now
            let written = batch.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written >= 0 else { throw BenchError.system("write", path: path) }
            guard written == batch.count else { throw BenchError(path: path, "wrote \(written) of \(batch.count) bytes (a full disk?)") }
            #if canImport(Darwin)
            guard fcntl(fd, F_FULLFSYNC) == 0 else { throw BenchError.system("fcntl(F_FULLFSYNC)", path: path) }
            #else
            guard fdatasync(fd) == 0 else { throw BenchError.system("fdatasync", path: path) }
            #endif
            latencies.append(clock.now - before)
        } while clock.now - start < duration
        return Result(lines: latencies.count * count, elapsed: clock.now - start, latencies: latencies.sorted())
    }
}
