import Crypto

/// A SHA-256 of one log line's exact bytes (without its newline): the link of the log's hash chain.
public struct LineHash: Sendable, Hashable, CustomStringConvertible {
    // The 32 digest bytes, as four big-endian words so that `description` reads in byte order.
    private var words: (UInt64, UInt64, UInt64, UInt64)

    /// The hash of `line`, which must not include its newline.
    public init(of line: UnsafeRawBufferPointer) {
        let digest = SHA256.hash(data: line)
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        digest.withUnsafeBytes { digestBytes in
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: digestBytes) }
        }
        self.words = words
    }

    /// The hash of a line given as bytes.
    public init(of line: some Collection<UInt8>) {
        // Arrays and their slices hash in place; only other collections are copied first.
        if let hash = line.withContiguousStorageIfAvailable({ LineHash(of: UnsafeRawBufferPointer($0)) }) {
            self = hash
        } else {
            self = Array(line).withUnsafeBytes { LineHash(of: $0) }
        }
    }

    /// The 32 digest bytes, in order (as a snapshot stores them).
    package var bytes: [UInt8] {
        withUnsafeBytes(of: words) { Array($0) }
    }

    /// A hash from its digest bytes, as `bytes` gives them (32; fewer leave the rest zero).
    package init(bytes: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes.prefix(32))) }
        self.words = words
    }

    /// Parses 64 lowercase hex digits from raw bytes; nil for anything else.
    public init?(hex: UnsafeRawBufferPointer) {
        guard hex.count == 64 else { return nil }
        // Sixteen digits make one word; a digit's table entry is its value, anything else 0xFF, so
        // one check of the OR of all entries at the end rejects any bad digit.
        var invalid: UInt8 = 0
        func word(_ first: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in first..<first + 16 {
                let nibble = Self.nibbles[Int(hex[index])]
                invalid |= nibble
                value = value << 4 | UInt64(nibble & 0x0f)
            }
            return value.bigEndian
        }
        let words = (word(0), word(16), word(32), word(48))
        guard invalid & 0xf0 == 0 else { return nil }
        self.words = words
    }

    /// Each byte's value as a lowercase hex digit, or 0xFF.
    private static let nibbles: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        default: 0xff
        }
    }

    public static func == (lhs: LineHash, rhs: LineHash) -> Bool {
        lhs.words == rhs.words
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: words) { hasher.combine(bytes: $0) }
    }

    /// 64 lowercase hex digits, as the log's `prev` field holds them.
    public var description: String {
        var text = [UInt8]()
        text.reserveCapacity(64)
        appendHex(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the 64 lowercase hex digits to `bytes` (what `description` spells, without a String).
    public func appendHex(to bytes: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { hex in
            writeHex(into: hex)
            bytes.append(contentsOf: UnsafeRawBufferPointer(hex))
        }
    }

    /// Writes the 64 lowercase hex digits into `buffer` (at least 64 bytes).
    package func writeHex(into buffer: UnsafeMutableRawBufferPointer) {
        withUnsafeBytes(of: words) { raw in
            for index in 0..<32 {
                let byte = raw[index]
                // "0"..."9" then "a"..."f": 0x30 + n, or 0x57 + n past 9.
                let high = byte >> 4, low = byte & 0x0f
                buffer[2 * index] = high < 10 ? 0x30 + high : 0x57 + high
                buffer[2 * index + 1] = low < 10 ? 0x30 + low : 0x57 + low
            }
        }
    }

    /// The hash's first four bytes: what names the line in an ETag (see `LineTag`).
    public var tag: LineTag {
        withUnsafeBytes(of: words) { raw in
            LineTag(rawValue: (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(raw[$1]) })
        }
    }

    /// The 32 digest bytes, in order, without copying them out.
    package func withDigestBytes<T>(_ body: (UnsafeRawBufferPointer) -> T) -> T {
        withUnsafeBytes(of: words, body)
    }

}
