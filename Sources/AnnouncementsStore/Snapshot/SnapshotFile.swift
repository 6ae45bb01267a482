import AnnouncementsDomain

/// The snapshot file: `<log>.snapshot`, beside the log. One file, replaced whole (written to
/// `<log>.snapshot.partial`, synced, renamed over the old one, and the folder synced), so a crash
/// while writing leaves the previous snapshot as it was.
///
/// All integers are 64-bit little-endian unless said otherwise. The file is a 104-byte header and a
/// payload:
///
/// | bytes  | header field                                                                   |
/// |--------|--------------------------------------------------------------------------------|
/// | 0-7    | magic `ANNOSNAP`                                                               |
/// | 8-11   | format version (UInt32): the layout of this file                               |
/// | 12-15  | state version (UInt32): what the state means (the fold's rules, the read models)|
/// | 16-23  | the tagged line's seq                                                          |
/// | 24-31  | the offset of its first byte in the log                                        |
/// | 32-39  | the offset just past its newline                                               |
/// | 40-71  | its SHA-256                                                                    |
/// | 72-79  | the payload's length in bytes                                                  |
/// | 80-87  | the payload's checksum                                                         |
/// | 88-95  | the newest line format the writing version reads (`Event.currentFormat`)       |
/// | 96-103 | the checksum of bytes 0-95                                                     |
///
/// The lines a snapshot covers are never read again at start-up, so the line format is what keeps
/// an older version from a log a newer one wrote: a full replay refuses a line of a format it does
/// not know ("upgrade"); a snapshot written by a version that reads newer formats is not used, and
/// the full replay says so. (A new kind of event comes with a new line format.)
///
/// The payload, in this order (so that the writer can let go of the index and the keys first):
/// the idempotency keys (a count, then per key its event's seq, its length and its UTF-8 bytes);
/// the event index (the number of events, each line's offset, each event's previous event about
/// the same announcement, the number of ids, each id's last event, each line's `LineTag`, 0 where
/// not known); the read model (seq, whether
/// there is a last event time and the time in milliseconds, the largest id, the writers that
/// created the live announcements (a count, then per writer its name's length and UTF-8 bytes),
/// the number of live announcements, then per announcement its id, revision, its creator's place
/// in that list, when it was created and last changed (milliseconds since 1970), title length,
/// body length or -1 for none, the title's UTF-8 bytes and the body's
/// bytes as JSON text); the title index (the number of announcements, then in title order each
/// one's id, whether its folded title is longer than the key's head, and the key's seven head
/// words: see `TitleKey`; stored because folding the case of half a million titles again would
/// take a third of a second); the erased announcements (a count, then per announcement its id and
/// the seq of its erased event); the search index, when the server kept one (see
/// `SnapshotContents.encodeSearchIndex`: restored with the state, so that a start from the
/// snapshot does not build it again).
///
/// The payload is checksummed in blocks of `blockSize` bytes (the last one shorter): the checksum of
/// each block (XXH64, see `SnapshotChecksum`) seeds the next one's, and the last is the payload's.
/// A reader reads the file in those blocks, one block ahead on another thread (which checksums it),
/// while it decodes the one before, so it never holds the whole file: only the state it builds and
/// a few blocks.
public enum SnapshotFile {
    static let magic: [UInt8] = Array("ANNOSNAP".utf8)
    /// The layout of the file. Bump it when the layout changes.
    static let formatVersion: UInt32 = 6
    /// What the state means. Bump it when the fold (`ReadModel.apply`), the read models or the
    /// index change what they hold, so that a snapshot made by another version is not trusted;
    /// and when the words of a text change (`HTMLText`, `SearchWords`, `DiacriticFolding`): the
    /// stored search index takes an announcement out by the words its texts give now.
    static let stateVersion: UInt32 = 6
    static let headerSize = 104
    static let blockSize = 4 << 20
    /// The longest line a tag may point at (a line is at most a few megabytes of JSON).
    static let maxLineLength = 1 << 30

    /// The snapshot of the log at `logPath`.
    public static func path(forLog logPath: String) -> String {
        logPath + ".snapshot"
    }

    /// Where a snapshot is written before it is renamed into place.
    static func partialPath(forLog logPath: String) -> String {
        logPath + ".snapshot.partial"
    }

    /// What the header says.
    struct Header: Sendable, Hashable {
        var formatVersion: UInt32
        var stateVersion: UInt32
        var tag: SnapshotTag
        var payloadLength: Int64
        var payloadChecksum: UInt64
        /// The newest line format the version that wrote it reads.
        var lineFormat: UInt8

        /// The header's 104 bytes, its own checksum last.
        var bytes: [UInt8] {
            var bytes = SnapshotFile.magic
            bytes.appendLittleEndian(formatVersion)
            bytes.appendLittleEndian(stateVersion)
            bytes.appendLittleEndian(UInt64(bitPattern: Int64(tag.seq)))
            bytes.appendLittleEndian(UInt64(bitPattern: tag.lineStart))
            bytes.appendLittleEndian(UInt64(bitPattern: tag.end))
            bytes.append(contentsOf: tag.hash.bytes)
            bytes.appendLittleEndian(UInt64(bitPattern: payloadLength))
            bytes.appendLittleEndian(payloadChecksum)
            bytes.appendLittleEndian(UInt64(lineFormat))
            bytes.appendLittleEndian(SnapshotChecksum.xxh64(bytes))
            return bytes
        }

        /// Reads a header, checking the magic, then the versions, then the checksum: a file of
        /// another version may lay its header out differently, so its versions are all that is read.
        init(_ bytes: [UInt8]) throws(SnapshotProblem) {
            guard bytes.count == SnapshotFile.headerSize else {
                throw .corrupt("the file is \(bytes.count) bytes, shorter than a snapshot's header")
            }
            guard Array(bytes[0..<8]) == SnapshotFile.magic else {
                throw .corrupt("not a snapshot file (it does not start with ANNOSNAP)")
            }
            formatVersion = UInt32(truncatingIfNeeded: bytes.littleEndian(at: 8, size: 4))
            stateVersion = UInt32(truncatingIfNeeded: bytes.littleEndian(at: 12, size: 4))
            guard formatVersion == SnapshotFile.formatVersion, stateVersion == SnapshotFile.stateVersion else {
                throw .foreignVersion("the file has format version \(formatVersion) and state version \(stateVersion); this version of the store reads format \(SnapshotFile.formatVersion), state \(SnapshotFile.stateVersion)")
            }
            guard bytes.littleEndian(at: 96, size: 8) == SnapshotChecksum.xxh64(Array(bytes[0..<96])) else {
                throw .corrupt("the header's checksum does not match its bytes")
            }
            let lineFormat = bytes.littleEndian(at: 88, size: 8)
            guard lineFormat <= UInt64(Event.currentFormat) else {
                throw .foreignVersion("a version that reads line formats up to \(lineFormat) wrote it, and this one (\(Release.version)) reads up to \(Event.currentFormat): the lines it covers may be of a format this version must refuse")
            }
            self.lineFormat = UInt8(lineFormat)
            let hash = bytes[40..<72].withUnsafeBytes { LineHash(bytes: $0) }
            tag = SnapshotTag(
                seq: Int(truncatingIfNeeded: bytes.littleEndian(at: 16, size: 8)),
                hash: hash,
                lineStart: Int64(bitPattern: bytes.littleEndian(at: 24, size: 8)),
                end: Int64(bitPattern: bytes.littleEndian(at: 32, size: 8))
            )
            payloadLength = Int64(bitPattern: bytes.littleEndian(at: 72, size: 8))
            payloadChecksum = bytes.littleEndian(at: 80, size: 8)
            guard tag.seq >= 1, tag.lineStart >= 0, tag.end > tag.lineStart, tag.lineLength <= SnapshotFile.maxLineLength,
                  payloadLength >= 0, payloadLength <= Int64.max - Int64(SnapshotFile.headerSize) else {
                throw .corrupt("the header's tag (seq \(tag.seq), bytes \(tag.lineStart)..<\(tag.end)) or payload length (\(payloadLength)) is impossible")
            }
        }

        init(tag: SnapshotTag, payloadLength: Int64, payloadChecksum: UInt64) {
            self.formatVersion = SnapshotFile.formatVersion
            self.stateVersion = SnapshotFile.stateVersion
            self.tag = tag
            self.payloadLength = payloadLength
            self.payloadChecksum = payloadChecksum
            self.lineFormat = Event.currentFormat
        }
    }
}

extension [UInt8] {
    /// Appends `value`'s bytes, least significant first.
    mutating func appendLittleEndian(_ value: some FixedWidthInteger) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// The little-endian integer of `size` bytes (at most 8) at `offset`.
    func littleEndian(at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (offset..<offset + size).reversed() { value = value << 8 | UInt64(self[index]) }
        return value
    }
}

/// Why a snapshot file cannot be used, in words (`SnapshotFile.checkedCoveredSeq`).
public struct SnapshotFileProblem: Error, Sendable, CustomStringConvertible {
    public var description: String
}
