import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot's payload on its way to the file: values are gathered into a buffer, and each full
/// block is checksummed and written, so the writer holds one block, never the whole payload.
struct SnapshotOutput {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Where the next block goes in the file.
    private var offset = Int64(SnapshotFile.headerSize)
    /// The checksum so far: the last written block's.
    private(set) var checksum: UInt64 = 0
    /// The first errno a write returned (nothing is written after it).
    private(set) var error: Int32 = 0

    init(fd: Int32) {
        self.fd = fd
        buffer.reserveCapacity(SnapshotFile.blockSize * 2)
    }

    /// The payload's length so far.
    var length: Int64 { offset - Int64(SnapshotFile.headerSize) + Int64(buffer.count) }

    /// Appends a 64-bit little-endian integer.
    mutating func integer(_ value: Int) {
        buffer.appendLittleEndian(UInt64(bitPattern: Int64(value)))
        if buffer.count >= SnapshotFile.blockSize { writeBlocks() }
    }

    /// Appends bytes as they are (their length goes before them, written by the caller).
    mutating func bytes(_ bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= SnapshotFile.blockSize { writeBlocks() }
    }

    /// `values` as integers, with no count before them.
    mutating func integers(_ values: some Collection<some FixedWidthInteger>) {
        for value in values {
            buffer.appendLittleEndian(UInt64(truncatingIfNeeded: Int64(truncatingIfNeeded: value)))
            if buffer.count >= SnapshotFile.blockSize { writeBlocks() }
        }
    }

    /// Writes the last, shorter block.
    mutating func finish() {
        writeBlocks()
        if !buffer.isEmpty { write(count: buffer.count) }
    }

    /// Writes every full block in the buffer, keeping the rest.
    private mutating func writeBlocks() {
        var written = 0
        while buffer.count - written >= SnapshotFile.blockSize {
            write(from: written, count: SnapshotFile.blockSize)
            written += SnapshotFile.blockSize
        }
        buffer.removeSubrange(0..<written)
    }

    /// Writes the first `count` bytes of the buffer, and empties it.
    private mutating func write(count: Int) {
        write(from: 0, count: count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Checksums and writes `count` bytes of the buffer from `start`; after a failed write, nothing.
    private mutating func write(from start: Int, count: Int) {
        guard error == 0 else { return }
        let (fd, seed, offset) = (self.fd, checksum, self.offset)
        (checksum, error) = buffer.withUnsafeBytes { raw in
            let block = UnsafeRawBufferPointer(rebasing: raw[start..<(start + count)])
            return (SnapshotChecksum.xxh64(block, seed: seed), FileIO.write(fd, block, at: offset))
        }
        self.offset += Int64(count)
    }
}
