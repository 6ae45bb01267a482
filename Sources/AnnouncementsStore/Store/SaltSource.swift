import AnnouncementsDomain
import Crypto

/// The salts of new events' data digests (see `LineHash(link:)`): 32 bytes each from a
/// cryptographic random source (swift-crypto's, a userspace generator seeded by the system), fetched
/// 128 salts at a time.
struct SaltSource {
    private static let perFetch = 128
    private var buffer: [UInt8] = []
    private var next = 0

    /// A fresh salt.
    mutating func salt() -> Salt {
        if next == buffer.count {
            buffer = SymmetricKey(size: SymmetricKeySize(bitCount: 256 * Self.perFetch)).withUnsafeBytes { Array($0) }
            next = 0
        }
        defer { next += 32 }
        return buffer.withUnsafeBytes { Salt(bytes: UnsafeRawBufferPointer(rebasing: $0[next..<(next + 32)])) }
    }
}
