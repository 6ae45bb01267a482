import Crypto

/// How a line joins the hash chain, and how its data is erased without breaking it.
///
/// A line of format 1 (no `"v"`) is linked by the SHA-256 of its bytes, as it always was. A line
/// of format 2 or later is linked by the SHA-256 of its *sealed form* followed by its length: the line with
/// `"data":{…},"salt":"…"` replaced by `"sealed":"<SHA-256 of the salt's 32 bytes and the data's
/// bytes>"` (a line with no data is its own sealed form), without padding, then the line's length
/// in bytes as a 64-bit little-endian integer. Erasing a line writes its sealed form in its place,
/// padded with spaces before the closing `}` to the same length: its link does not change, so neither does any `prev`, offset, head or snapshot tag,
/// and the chain still proves every other byte of every line. The salt goes with the data, so a
/// guessed title cannot be checked against the digest. Both rely on the layout `encodeLine`
/// writes: a line of format 2 or later laid out otherwise is linked by its bytes, which then break the chain.
extension LineHash {
    /// The link of `line` (without its newline) in the hash chain: what the next line's `prev` is.
    public init(link line: UnsafeRawBufferPointer) {
        guard let parts = SealableLine(line) else {
            self.init(of: line)
            return
        }
        // The sealed form without its padding, then the line's length: padding cannot be added to
        // or taken from any line unnoticed, and none is hashed.
        var hasher = SHA256()
        hasher.update(bufferPointer: parts.head)
        if let digest = parts.dataDigest {
            hasher.update(bufferPointer: UnsafeRawBufferPointer(start: SealableLine.sealedKey.utf8Start, count: SealableLine.sealedKey.utf8CodeUnitCount))
            withUnsafeTemporaryAllocation(byteCount: 65, alignment: 1) { hex in
                digest.writeHex(into: hex)
                hex[64] = UInt8(ascii: "\"")
                hasher.update(bufferPointer: UnsafeRawBufferPointer(hex))
            }
        }
        hasher.update(bufferPointer: parts.tail)
        hasher.update(bufferPointer: UnsafeRawBufferPointer(start: SealableLine.closing.utf8Start, count: 1))
        withUnsafeBytes(of: UInt64(line.count).littleEndian) { hasher.update(bufferPointer: $0) }
        self = hasher.finalize().withUnsafeBytes { LineHash(bytes: $0) }
    }

    /// The link of a line given as bytes.
    public init(link line: some Collection<UInt8>) {
        if let hash = line.withContiguousStorageIfAvailable({ LineHash(link: UnsafeRawBufferPointer($0)) }) {
            self = hash
        } else {
            self = Array(line).withUnsafeBytes { LineHash(link: $0) }
        }
    }
}

/// The parts of a line of format 2 or later that its link and its sealing need.
public struct SealableLine {
    /// Up to the data (`{"seq":…,"by":"…"`), or for a line without salted data, all of it up to
    /// its suffix.
    let head: UnsafeRawBufferPointer
    /// From `,"v":N` to the end of `prev`: the line ends with this, padding, and `}`.
    let tail: UnsafeRawBufferPointer
    /// The salted digest of the data, for a line with salted data; nil for one without (a delete,
    /// or a line already sealed).
    let dataDigest: LineHash?

    static let sealedKey: StaticString = #","sealed":""#
    static let quote: StaticString = "\""
    static let closing: StaticString = "}"
    private static let dataKey = Array(#","data":"#.utf8)
    private static let saltKey = Array(#","salt":""#.utf8)
    private static let formatKey = Array(#","v":"#.utf8)
    private static let prevKey = Array(#","prev":""#.utf8)

    /// The parts of `line`; nil for a line of format 1 or one not laid out as the store writes.
    init?(_ line: UnsafeRawBufferPointer) {
        // The end: `,"v":N` (N a format that seals) and an optional `,"prev":"<64 hex>"`, then
        // spaces (an erased line's padding), then `}`.
        guard var end = line.lastIndex(of: UInt8(ascii: "}")), end == line.count - 1 else { return nil }
        while end > 0, line[end - 1] == UInt8(ascii: " ") { end -= 1 }
        var suffixStart = end
        if end >= 66 + Self.prevKey.count, line[end - 1] == UInt8(ascii: "\""),
           Self.matches(line, at: end - 66 - Self.prevKey.count + 1, Self.prevKey) {
            suffixStart = end - 66 - Self.prevKey.count + 1
        }
        // N: the digits before the suffix (a format of any length), without a leading zero.
        var digitsStart = suffixStart, format = 0
        while digitsStart > 0, suffixStart - digitsStart < 3, line[digitsStart - 1] &- UInt8(ascii: "0") < 10 { digitsStart -= 1 }
        for index in digitsStart..<suffixStart { format = format * 10 + Int(line[index] - UInt8(ascii: "0")) }
        guard digitsStart < suffixStart, line[digitsStart] != UInt8(ascii: "0"),
              (Int(Event.firstErasableFormat)...Int(Event.currentFormat)).contains(format),
              Self.matches(line, at: digitsStart - Self.formatKey.count, Self.formatKey) else { return nil }
        let tailStart = digitsStart - Self.formatKey.count
        tail = UnsafeRawBufferPointer(rebasing: line[tailStart..<end])
        // `,"salt":"<64 hex>"` right before the suffix: the data object runs from the first
        // `,"data":` (a raw quote cannot be inside a string, so the first one is the field) to it.
        let saltStart = tailStart - Self.saltKey.count - 65
        if saltStart > 0, Self.matches(line, at: saltStart, Self.saltKey), line[tailStart - 1] == UInt8(ascii: "\""),
           let salt = Salt(hex: UnsafeRawBufferPointer(rebasing: line[(saltStart + Self.saltKey.count)..<(tailStart - 1)])),
           let dataKey = Self.find(Self.dataKey, in: UnsafeRawBufferPointer(rebasing: line[..<saltStart])) {
            head = UnsafeRawBufferPointer(rebasing: line[..<dataKey])
            var hasher = SHA256()
            salt.value.withDigestBytes { hasher.update(bufferPointer: $0) }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: line[(dataKey + Self.dataKey.count)..<saltStart]))
            dataDigest = hasher.finalize().withUnsafeBytes { LineHash(bytes: $0) }
        } else {
            head = UnsafeRawBufferPointer(rebasing: line[..<tailStart])
            dataDigest = nil
        }
    }

    /// The sealed form of `line`, padded with spaces to its length: what erasing its data writes
    /// in its place. nil for a line with no salted data to erase (format 1, a delete, or sealed).
    public static func sealed(_ line: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let parts = SealableLine(line), let digest = parts.dataDigest else { return nil }
        var sealed = Array(parts.head)
        sealed.append(contentsOf: #","sealed":""#.utf8)
        sealed.append(contentsOf: digest.description.utf8)
        sealed.append(UInt8(ascii: "\""))
        sealed.append(contentsOf: parts.tail)
        // The data and salt took at least 84 bytes, their digest takes 76: always shorter.
        guard sealed.count < line.count else { return nil }
        sealed.append(contentsOf: repeatElement(UInt8(ascii: " "), count: line.count - sealed.count - 1))
        sealed.append(UInt8(ascii: "}"))
        return sealed
    }

    private static func matches(_ line: UnsafeRawBufferPointer, at start: Int, _ text: [UInt8]) -> Bool {
        guard start >= 0, start + text.count <= line.count else { return false }
        return line[start..<(start + text.count)].elementsEqual(text)
    }

    private static func find(_ text: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= text.count else { return nil }
        var index = 0
        while index <= bytes.count - text.count {
            if bytes[index] == text[0], matches(bytes, at: index, text) { return index }
            index += 1
        }
        return nil
    }
}
