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

/// Reads a log from start to end, parsing lines on every core and delivering them in order.
///
/// The file is cut into chunks of `chunkSize` bytes; a chunk owns the lines that start in it. Worker
/// threads each read and parse (and, when asked, hash) a chunk while the caller folds the chunk
/// before it, so the caller's thread only applies events. Bytes after the last newline are not
/// delivered: they are a line still being written, or one torn by a crash (see `Summary.tail`).
/// Readers never lock the file, so they may run while a server appends; they read the file as it
/// was when they opened it.
public struct LogReader: Sendable {
    /// The log's path.
    public var path: String
    /// Whether to compute each line's SHA-256 (for `verify`); off for a plain replay.
    public var computesHashes: Bool
    /// Whether to sync the file's data to disk before reading it: a copy that is to be a backup
    /// then holds no line a writer had written and not yet synced, which a power loss could take
    /// back from the log (the read fails where the sync does).
    public var syncsFirst = false
    /// How many bytes of the file each chunk covers.
    var chunkSize: Int
    /// Where reading starts: 0, or just past a line's newline (the end of what a snapshot covers),
    /// with the number of lines before it, so that line numbers stay those of the whole file.
    var start: (offset: Int64, linesBefore: Int) = (0, 0)

    public init(path: String, computesHashes: Bool = false) {
        self.path = path
        self.computesHashes = computesHashes
        self.chunkSize = 4 << 20
    }

    /// Whether the file at `path` still holds `line` (without its newline) at `offset`, with its
    /// newline: what a copy checks after reading, so that it keeps no line a writer undid while
    /// it read (an append that failed, cut back off the log).
    public static func holds(_ line: ArraySlice<UInt8>, at offset: Int64, in path: String) -> Bool {
        guard let file = try? ReadOnlyFile(path: path), file.size >= offset + Int64(line.count) + 1,
              let bytes = try? file.bytes(from: offset, count: line.count + 1) else { return false }
        return bytes.last == UInt8(ascii: "\n") && bytes.dropLast().elementsEqual(line)
    }

    /// What `read` saw besides the lines it delivered.
    public struct Summary: Sendable {
        /// The number of lines delivered.
        public var lines: Int
        /// The file's size when reading started.
        public var size: Int64
        /// The offset and bytes after the last newline, when the file does not end with one.
        public var tail: (offset: Int64, bytes: [UInt8])?
    }

    /// Whether `read` should go on after a line.
    public enum Next: Sendable {
        case `continue`, stop
    }

    /// Delivers every complete line in order to `body`, which may stop early, and may take the
    /// line's event with `LogLine.takeParsed()` rather than copy it.
    /// `progress` is called after each chunk with the bytes delivered so far and the file's size.
    @discardableResult
    public func read(
        progress: ((_ done: Int64, _ total: Int64) -> Void)? = nil,
        _ body: (inout LogLine) throws(LogError) -> Next
    ) throws(LogError) -> Summary {
        let file = try ReadOnlyFile(path: path)
        let size = file.size
        // (A file system that cannot sync, read-only media, has nothing unsynced to lose.)
        if syncsFirst, FileOperations.system.sync(file.fd) != 0, errno != EINVAL, errno != EROFS {
            throw LogError.system(.unreadable, path: path, "cannot sync the log's lines to disk before reading them", errno: errno)
        }
        let linesEnd = try file.endOfLastLine(before: size)
        let tail = linesEnd < size ? (linesEnd, try file.bytes(from: linesEnd, count: Int(size - linesEnd))) : nil

        let chunkSize = Int64(self.chunkSize)
        let first = start.offset
        let chunkCount = linesEnd > first ? Int((linesEnd - first + chunkSize - 1) / chunkSize) : 0
        // Chunks read ahead: enough that the reader's thread finds one to parse while it waits.
        let window = 2 * max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) + 1
        let pool = BufferPool()
        let hashes = computesHashes
        var pending: [ChunkSlot] = []
        var next = 0
        var lineNumber = start.linesBefore

        while true {
            while next < chunkCount, pending.count < window {
                let slot = ChunkSlot(
                    file: file, pool: pool, owned: first + Int64(next) * chunkSize,
                    ownedEnd: min(first + Int64(next + 1) * chunkSize, linesEnd), linesEnd: linesEnd
                )
                DispatchQueue.global().async { slot.run(hashes: hashes) }
                pending.append(slot)
                next += 1
            }
            guard !pending.isEmpty else { break }
            let slot = pending.removeFirst()
            // While a worker parses the chunk we need, parse a later one nobody has started: both
            // cores stay busy, whichever of them the workers got. Then parse this one here if no
            // worker has started on it.
            while !slot.isFinished, let idle = pending.first(where: \.isUnclaimed) {
                idle.run(hashes: hashes)
            }
            slot.run(hashes: hashes)
            slot.done.wait()
            var chunk = slot.takeResult()
            if let error = chunk.error { throw LogError.system(.unreadable, path: path, "cannot read the log", errno: error) }
            for index in chunk.lines.indices {
                if let body = chunk.lines[index].body {
                    // Bodies are copied out of the chunk here, on the thread that keeps them (and
                    // frees the ones they replace), not on the parsing threads: the allocator then
                    // serves and takes back a body's memory on one thread, without contention.
                    chunk.lines[index].event.setBody(JSONText(escaped: Array(chunk.buffer[body])))
                }
                // Move the event out rather than copy it: a copy retains each of its strings.
                var event = Event.placeholder
                swap(&event, &chunk.lines[index].event)
                let parsed: Result<Event, LineProblem> = if let problem = chunk.lines[index].problem { .failure(problem) } else { .success(event) }
                lineNumber += 1
                let start = chunk.starts[index]
                let end = chunk.starts[index + 1] - 1
                let offset = chunk.offset + Int64(start)
                var line = LogLine(
                    number: lineNumber,
                    offset: offset,
                    bytes: chunk.buffer[start..<end],
                    parsed: parsed,
                    hash: hashes ? chunk.hashes[index] : nil,
                    isLast: offset + Int64(end - start) + 1 == linesEnd
                )
                if case .stop = try body(&line) {
                    for slot in pending { slot.done.wait() }
                    return Summary(lines: lineNumber, size: size, tail: nil)
                }
            }
            progress?(slot.ownedEnd, size)
            pool.recycle(&chunk.buffer)
        }
        return Summary(lines: lineNumber, size: size, tail: tail)
    }
}

/// A log file opened for reading.
final class ReadOnlyFile: Sendable {
    let path: String
    let fd: Int32
    let size: Int64

    init(path: String) throws(LogError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT {
                throw LogError(.unreadable, path: path, message: "no such log file: `announcements init` (or the server's first start) creates and seeds it")
            }
            throw LogError.system(.unreadable, path: path, "cannot open the log", errno: code)
        }
        self.size = try FileIO.sizeOrClose(fd, path: path)
        self.fd = fd
    }

    deinit {
        FileIO.close(fd)
    }

    /// Reads exactly `buffer.count` bytes at `offset`; returns 0 or an errno.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int32 {
        FileIO.read(fd, into: buffer, at: offset)
    }

    func bytes(from offset: Int64, count: Int) throws(LogError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let error = bytes.withUnsafeMutableBytes { read(into: $0, at: offset) }
        guard error == 0 else { throw LogError.system(.unreadable, path: path, "cannot read the log", errno: error) }
        return bytes
    }

    /// Every byte of the file as it was opened.
    func all() throws(LogError) -> [UInt8] {
        try bytes(from: 0, count: Int(size))
    }

    /// The offset just past the last newline before `end` (0 when there is none).
    func endOfLastLine(before end: Int64) throws(LogError) -> Int64 {
        var blockEnd = end
        while blockEnd > 0 {
            let blockStart = max(0, blockEnd - 65536)
            let block = try bytes(from: blockStart, count: Int(blockEnd - blockStart))
            if let newline = block.lastIndex(of: UInt8(ascii: "\n")) { return blockStart + Int64(newline) + 1 }
            blockEnd = blockStart
        }
        return 0
    }
}

/// Chunk buffers, reused so that each chunk does not fault in fresh pages.
private final class BufferPool: Sendable {
    private let buffers = Mutex<[[UInt8]]>([])

    func take() -> [UInt8] {
        buffers.withLock { $0.popLast() } ?? []
    }

    /// Takes `buffer` back for reuse (it is reused in place only if nothing else holds it).
    func recycle(_ buffer: inout [UInt8]) {
        let taken = buffer
        buffer = []
        buffers.withLock { $0.append(taken) }
    }
}

/// One chunk on its way through a worker.
///
/// `@unchecked Sendable`: `result` is written once, by the one thread that claims the chunk, before
/// it signals `done`; the reader reads it only after waiting on `done`, and the semaphore orders the two.
private final class ChunkSlot: @unchecked Sendable {
    struct Parsed {
        /// The buffer holding the chunk's lines, read from `offset`.
        var buffer: [UInt8] = []
        var offset: Int64 = 0
        /// Where each line starts in `buffer`, and one more: where the line after the last would.
        var starts: [Int] = []
        var lines: [ParsedLine] = []
        var hashes: [LineHash] = []
        var error: Int32?
    }

    /// One line as a worker parsed it.
    struct ParsedLine {
        /// The line's event (`Event.placeholder` when it has a problem).
        var event: Event
        /// Where its body is in the chunk's buffer, when the parser left it there (see `read`).
        var body: Range<Int>?
        var problem: LineProblem?
    }

    let file: ReadOnlyFile
    let pool: BufferPool
    /// The chunk owns the lines that start in `owned..<ownedEnd`.
    let owned: Int64
    let ownedEnd: Int64
    /// The offset just past the file's last newline.
    let linesEnd: Int64
    let done = DispatchSemaphore(value: 0)
    /// Set by whichever thread starts parsing: a worker, or the reader when it gets there first.
    private let isClaimed = Atomic(false)
    /// Set once `result` is written.
    private let finished = Atomic(false)
    private var result = Parsed()

    init(file: ReadOnlyFile, pool: BufferPool, owned: Int64, ownedEnd: Int64, linesEnd: Int64) {
        self.file = file
        self.pool = pool
        self.owned = owned
        self.ownedEnd = ownedEnd
        self.linesEnd = linesEnd
    }

    /// The worker's result, moved out so that its buffer can be reused; call after `done.wait()`.
    func takeResult() -> Parsed {
        var taken = Parsed()
        swap(&taken, &result)
        return taken
    }

    /// Whether no thread has started parsing the chunk yet.
    var isUnclaimed: Bool { !isClaimed.load(ordering: .relaxed) }

    /// Whether the chunk is parsed (`done.wait()` then returns at once).
    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Parses the chunk, unless another thread has already started to.
    func run(hashes: Bool) {
        guard !isClaimed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        result = parse(hashes: hashes)
        finished.store(true, ordering: .releasing)
        done.signal()
    }

    private func parse(hashes: Bool) -> Parsed {
        var result = Parsed()
        // Read from one byte before the chunk (to see whether a line starts at `owned`) to the end of
        // the last line that starts in it.
        let readStart = max(0, owned - 1)
        var buffer = pool.take()
        var readEnd = ownedEnd
        var error = fill(&buffer, from: readStart, to: readEnd)
        var lastNewline = buffer.lastIndex(of: UInt8(ascii: "\n")) ?? -1
        while error == 0, readStart + Int64(lastNewline) + 1 < ownedEnd, readEnd < linesEnd {
            // The last line that starts in the chunk runs past it: read on to its newline.
            let previousEnd = readEnd
            readEnd = min(linesEnd, readEnd + Int64(max(4096, (ownedEnd - owned) / 4)))
            error = append(&buffer, from: previousEnd, to: readEnd)
            lastNewline = buffer.lastIndex(of: UInt8(ascii: "\n")) ?? -1
        }
        guard error == 0 else {
            result.error = error
            return result
        }
        var start: Int
        if owned == 0 {
            start = 0
        } else if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            start = newline + 1
        } else {
            start = buffer.count
        }
        let ownedLimit = Int(ownedEnd - readStart)
        buffer.withUnsafeBytes { raw in
            while start < ownedLimit, start < raw.count {
                let end = Self.lineEnd(in: raw, from: start)
                guard end < raw.count else { break }
                let line = UnsafeRawBufferPointer(rebasing: raw[start..<end])
                result.starts.append(start)
                do throws(LineProblem) {
                    let (event, body) = try EventParser.parseDeferringBody(line)
                    result.lines.append(ParsedLine(event: event, body: body.map { (start + $0.lowerBound)..<(start + $0.upperBound) }))
                } catch {
                    result.lines.append(ParsedLine(event: .placeholder, problem: error))
                }
                if hashes { result.hashes.append(LineHash(link: line)) }
                start = end + 1
            }
        }
        result.starts.append(start)
        result.buffer = buffer
        result.offset = readStart
        return result
    }

    /// Replaces `buffer`'s contents with the file's bytes in `start..<end`.
    private func fill(_ buffer: inout [UInt8], from start: Int64, to end: Int64) -> Int32 {
        buffer.removeAll(keepingCapacity: true)
        return append(&buffer, from: start, to: end)
    }

    private func append(_ buffer: inout [UInt8], from start: Int64, to end: Int64) -> Int32 {
        let oldCount = buffer.count
        let count = Int(end - start)
        guard count > 0 else { return 0 }
        buffer.append(contentsOf: repeatElement(0, count: count))
        return buffer.withUnsafeMutableBytes { raw in
            file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[oldCount...]), at: start)
        }
    }

    /// The index of the next newline at or after `start`, or the buffer's end.
    private static func lineEnd(in raw: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = raw.baseAddress, start < raw.count,
              let found = memchr(base + start, Int32(UInt8(ascii: "\n")), raw.count - start)
        else { return raw.count }
        return UnsafeRawPointer(found) - base
    }
}
