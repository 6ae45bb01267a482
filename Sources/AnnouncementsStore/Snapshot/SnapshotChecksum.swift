import AnnouncementsDomain

/// XXH64 (Yann Collet's xxHash, 64-bit): the checksum that detects a damaged snapshot.
///
/// Not SHA-256: a snapshot is about as large as the live text (hundreds of megabytes), and start-up
/// has a second for all of it; xxHash reads several gigabytes a second on one core, and finds
/// damage (torn writes, flipped bits, truncation) as surely. Snapshots are not a defence against
/// someone forging one: whoever can write beside the log can write the log.
enum SnapshotChecksum {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The XXH64 of `bytes` with `seed`. A file is checksummed block by block, each block's
    /// checksum seeding the next one's (see `SnapshotFile`).
    static func xxh64(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return finish(seed &+ p5, count: 0) }
        @inline(__always) func word(_ at: Int) -> UInt64 { base.loadUnaligned(fromByteOffset: at, as: UInt64.self).littleEndian }
        var index = 0
        var hash: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2, v2 = seed &+ p2, v3 = seed, v4 = seed &- p1
            while index + 32 <= count {
                v1 = round(v1, word(index))
                v2 = round(v2, word(index + 8))
                v3 = round(v3, word(index + 16))
                v4 = round(v4, word(index + 24))
                index += 32
            }
            hash = rotate(v1, 1) &+ rotate(v2, 7) &+ rotate(v3, 12) &+ rotate(v4, 18)
            hash = merge(hash, v1)
            hash = merge(hash, v2)
            hash = merge(hash, v3)
            hash = merge(hash, v4)
        } else {
            hash = seed &+ p5
        }
        hash &+= UInt64(count)
        while index + 8 <= count {
            hash ^= round(0, word(index))
            hash = rotate(hash, 27) &* p1 &+ p4
            index += 8
        }
        if index + 4 <= count {
            hash ^= UInt64(base.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian) &* p1
            hash = rotate(hash, 23) &* p2 &+ p3
            index += 4
        }
        while index < count {
            hash ^= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) &* p5
            hash = rotate(hash, 11) &* p1
            index += 1
        }
        return finish(hash, count: -1)
    }

    /// The XXH64 of an array's bytes.
    static func xxh64(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { xxh64($0, seed: seed) }
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotate(accumulator &+ input &* p2, 31) &* p1
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ accumulator: UInt64) -> UInt64 {
        (hash ^ round(0, accumulator)) &* p1 &+ p4
    }

    /// The final avalanche (`count` 0 adds the empty input's length first; -1: already added).
    @inline(__always)
    private static func finish(_ hash: UInt64, count: Int) -> UInt64 {
        var hash = count >= 0 ? hash &+ UInt64(count) : hash
        hash ^= hash >> 33
        hash &*= p2
        hash ^= hash >> 29
        hash &*= p3
        hash ^= hash >> 32
        return hash
    }
}
