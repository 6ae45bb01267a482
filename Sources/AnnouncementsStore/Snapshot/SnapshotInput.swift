import AnnouncementsDomain
import Dispatch

/// A snapshot's payload read back block by block, with every length checked against what is left:
/// a damaged file yields `SnapshotProblem.corrupt`, never a crash or an allocation it names.
///
/// The next block is read (and checksummed) on another thread while this one decodes: the copy out
/// of the page cache and the checksum then cost the decoder nothing. Each block arrives with room
/// before it, where the bytes left over from the previous block (an item that spans the two) are
/// copied, so that items are always contiguous without copying whole blocks.
struct SnapshotInput {
    private let blocks: SnapshotBlocks
    private var buffer: [UInt8] = []
    private var position = 0
    /// A buffer done with, for the next block to be read into.
    private var spare: [UInt8] = []

    init(fd: Int32, payloadLength: Int64) {
        blocks = SnapshotBlocks(fd: fd, payloadLength: payloadLength)
    }

    /// Payload bytes not yet decoded.
    var remaining: Int64 { blocks.unclaimed + Int64(buffer.count - position) }

    /// Whether every byte was decoded.
    var isAtEnd: Bool { remaining == 0 }

    /// The payload's checksum, once every block has been read.
    var checksum: UInt64 { blocks.checksum }

    /// Waits for a block being read ahead: call before the file is closed.
    func stop() {
        blocks.stop()
    }

    /// The next 64-bit little-endian integer.
    mutating func integer() throws(SnapshotProblem) -> Int {
        try need(8)
        let value = buffer.withUnsafeBytes { $0.integer(at: position) }
        position += 8
        return value
    }

    /// A count of items of at least `itemSize` bytes each, which the rest of the payload can hold.
    mutating func count(itemSize: Int, of what: String) throws(SnapshotProblem) -> Int {
        let count = try integer()
        guard count >= 0, Int64(count) <= remaining / Int64(max(1, itemSize)) else {
            throw .corrupt("\(what): a count of \(count) does not fit in the \(remaining) bytes left")
        }
        return count
    }

    /// The next `count` bytes, given to `body` without a copy.
    mutating func bytes<T>(_ count: Int, _ body: (UnsafeRawBufferPointer) -> T) throws(SnapshotProblem) -> T {
        guard count >= 0, Int64(count) <= remaining else {
            throw .corrupt("a length of \(count) bytes does not fit in the \(remaining) bytes left")
        }
        try need(count)
        let start = position
        position += count
        return buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
    }

    /// `count` integers, converted a block at a time (for the index's arrays).
    mutating func integers<T: FixedWidthInteger>(_ count: Int, as _: T.Type) throws(SnapshotProblem) -> [T] {
        guard count >= 0, Int64(count) <= remaining / 8 else {
            throw .corrupt("\(count) numbers do not fit in the \(remaining) bytes left")
        }
        var values = [T]()
        values.reserveCapacity(count)
        while values.count < count {
            try need(8)
            let available = min((buffer.count - position) / 8, count - values.count)
            let position = self.position
            buffer.withUnsafeBytes { raw in
                for index in 0..<available { values.append(T(truncatingIfNeeded: raw.integer(at: position + index * 8))) }
            }
            self.position += available * 8
        }
        return values
    }

    /// Makes at least `count` bytes available from `position`, taking the blocks read ahead.
    private mutating func need(_ count: Int) throws(SnapshotProblem) {
        while buffer.count - position < count {
            var recycled: [UInt8] = []
            swap(&recycled, &spare)
            guard var block = try blocks.next(recycling: consume recycled) else {
                throw .corrupt("the file ends in the middle of its contents")
            }
            let leftover = buffer.count - position
            if leftover <= SnapshotBlocks.headroom {
                // Copy what is left of this block just before the next one, and go on in that.
                let (start, from) = (SnapshotBlocks.headroom - leftover, position)
                block.withUnsafeMutableBytes { target in
                    buffer.withUnsafeBytes { source in
                        UnsafeMutableRawBufferPointer(rebasing: target[start..<SnapshotBlocks.headroom])
                            .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[from...]))
                    }
                }
                swap(&buffer, &block)
                spare = block
                position = start
            } else {
                // An item longer than the room: append the block to it instead.
                buffer.removeSubrange(0..<position)
                position = 0
                buffer.append(contentsOf: block[SnapshotBlocks.headroom...])
                spare = block
            }
        }
    }
}

/// Reads a snapshot's payload blocks one ahead of the decoder, on a Dispatch thread, each into a
/// buffer with `headroom` free bytes before it, and checksums them in order (see `SnapshotFile`).
///
/// `@unchecked Sendable`: `offset`, `unclaimed` and `isReading` are touched only by the decoder's
/// thread; `ready` and `checksum` are written by the one read in flight, which the decoder starts
/// after taking the previous one's result, and read by the decoder only after `done.wait()`: the
/// semaphore (and the Dispatch hand-off) order every access.
final class SnapshotBlocks: @unchecked Sendable {
    /// Room before each block for the end of the previous one.
    static let headroom = 1 << 20

    private let fd: Int32
    private var offset = Int64(SnapshotFile.headerSize)
    /// Payload bytes not yet handed to the decoder (read ahead or not).
    private(set) var unclaimed: Int64
    /// Payload bytes not yet asked of the reading thread.
    private var unrequested: Int64
    private var isReading = false
    private var ready: (bytes: [UInt8], error: Int32, count: Int) = ([], 0, 0)
    private let done = DispatchSemaphore(value: 0)
    /// The checksum of the blocks read so far.
    private(set) var checksum: UInt64 = 0

    init(fd: Int32, payloadLength: Int64) {
        self.fd = fd
        self.unclaimed = payloadLength
        self.unrequested = payloadLength
        readAhead(into: [])
    }

    /// The next block, after `headroom` bytes; nil when there is none. Starts reading the one after
    /// into `recycled`.
    func next(recycling recycled: consuming [UInt8]) throws(SnapshotProblem) -> [UInt8]? {
        guard isReading else { return nil }
        done.wait()
        isReading = false
        var taken: (bytes: [UInt8], error: Int32, count: Int) = ([], 0, 0)
        swap(&taken, &ready)
        guard taken.error == 0 else {
            throw .corrupt("cannot read the file's contents (errno \(taken.error); is it shorter than its header says?)")
        }
        unclaimed -= Int64(taken.count)
        readAhead(into: consume recycled)
        return taken.bytes
    }

    /// Waits for the read in flight, if any.
    func stop() {
        if isReading {
            done.wait()
            isReading = false
        }
    }

    /// Starts reading the next block, if any, into `recycled` (or a new buffer) on a Dispatch thread.
    private func readAhead(into recycled: consuming [UInt8]) {
        guard unrequested > 0 else { return }
        let count = Int(min(Int64(SnapshotFile.blockSize), unrequested))
        let (fd, at) = (self.fd, offset)
        offset += Int64(count)
        unrequested -= Int64(count)
        isReading = true
        // The buffer goes to the reading thread through `ready`, not captured by its closure: a
        // captured copy would be a second reference, and filling it would copy the whole buffer.
        ready.bytes = recycled
        DispatchQueue.global().async {
            var bytes: [UInt8] = []
            swap(&bytes, &self.ready.bytes)
            let size = Self.headroom + count
            if bytes.count != size { bytes = [UInt8](repeating: 0, count: size) }
            let (error, checksum) = bytes.withUnsafeMutableBytes { raw in
                let block = UnsafeMutableRawBufferPointer(rebasing: raw[Self.headroom...])
                let error = FileIO.read(fd, into: block, at: at)
                return (error, error == 0 ? SnapshotChecksum.xxh64(UnsafeRawBufferPointer(block), seed: self.checksum) : 0)
            }
            self.checksum = checksum
            self.ready = (bytes, error, count)
            self.done.signal()
        }
    }
}
