import AnnouncementsDomain
import Crypto

/// The salts of new events' data digests (see `LineHash(link:)`): 32 bytes each, the SHA-256 of a
/// secret key and a counter (a pseudorandom function: unpredictable without the key). The key, 32
/// bytes from the system's random source, lives only in this process's memory and is never
/// written: once a line's salt is erased, nothing can recompute it. (A system random call per
/// salt cost 5% of the committer's time at 64 writers.)
struct SaltSource {
    private let key: [UInt8]
    private var counter: UInt64 = 0

    init() {
        var generator = SystemRandomNumberGenerator()
        key = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A fresh salt.
    mutating func salt() -> Salt {
        counter += 1
        var hasher = SHA256()
        key.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        withUnsafeBytes(of: counter.littleEndian) { hasher.update(bufferPointer: $0) }
        return hasher.finalize().withUnsafeBytes { Salt(bytes: $0) }
    }
}
