import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The state a snapshot is written from, all of it at one seq: the read model, the hash of the
/// last line, the event index and the idempotency keys. Every part is a value that later writes
/// do not change (they copy what they touch), so the store takes it in a moment and the writing
/// happens elsewhere.
struct SnapshotContents: Sendable {
    var model: ReadModel
    var lastHash: LineHash?
    var index: EventIndex
    /// The seq of the event each idempotency key made.
    var keys: [String: Int]
    /// The search index at the same seq, once the indexer has it; nil when none is kept.
    var search: SearchIndexer.PendingCopy?

    /// The line the snapshot covers last; nil when there is none (an empty log), or when the
    /// parts do not agree on it.
    var tag: SnapshotTag? {
        let seq = model.seq
        guard seq >= 1, let lastHash, index.lastSeq == seq, let span = index.span(seq...seq) else { return nil }
        return SnapshotTag(seq: seq, hash: lastHash, lineStart: span.offset, end: span.offset + Int64(span.count))
    }

    /// Writes the snapshot beside the log at `logPath`, replacing the one there only once the new
    /// one is durable; returns the line it covers last. Writes nothing unless the disk keeps
    /// `keepingFree` bytes free beside it (see `checkFreeSpace`).
    func write(besideLog logPath: String, keepingFree: Int64) throws(LogError) -> SnapshotTag {
        let path = SnapshotFile.path(forLog: logPath)
        let partial = SnapshotFile.partialPath(forLog: logPath)
        guard let tag else {
            throw LogError(.writeFailed, path: path, message: "cannot write a snapshot: the state covers no line")
        }
        try Self.checkFreeSpace(for: path, needing: estimatedSize, keepingFree: keepingFree)
        // Private, then as private as the log (it holds every live text): the log's owner and permissions.
        let fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw LogError.system(.writeFailed, path: partial, "cannot create the snapshot", errno: errno) }
        var isWritten = false
        defer {
            FileIO.close(fd)
            if !isWritten { unlink(partial) }
        }
        try FileIO.give(fd, path: partial, what: "the snapshot", theOwnershipOf: logPath)
        var output = SnapshotOutput(fd: fd)
        encode(into: &output)
        output.finish()
        guard output.error == 0 else { throw LogError.system(.writeFailed, path: partial, "cannot write the snapshot", errno: output.error) }
        let header = SnapshotFile.Header(tag: tag, payloadLength: output.length, payloadChecksum: output.checksum).bytes
        let headerError = header.withUnsafeBytes { FileIO.write(fd, $0, at: 0) }
        guard headerError == 0 else { throw LogError.system(.writeFailed, path: partial, "cannot write the snapshot", errno: headerError) }
        guard FileIO.fullSync(fd) == 0 else { throw LogError.system(.writeFailed, path: partial, "cannot sync the snapshot to disk", errno: errno) }
        guard rename(partial, path) == 0 else { throw LogError.system(.writeFailed, path: path, "cannot move the new snapshot into place", errno: errno) }
        isWritten = true
        FileLog.syncFolder(FileLog.folder(of: path))
        return tag
    }

    /// Throws unless the disk of `path` has room for a snapshot of `needed` bytes and `keepingFree`
    /// bytes more: while the new one is written, the old one is still there, and a snapshot that
    /// took the space the log needs would fail the writes (a snapshot only makes start-up faster).
    static func checkFreeSpace(for path: String, needing needed: Int64, keepingFree: Int64) throws(LogError) {
        var disk = statvfs()
        guard statvfs(FileLog.folder(of: path), &disk) == 0 else { return }
        let free = Int64(disk.f_bavail) * Int64(disk.f_frsize)
        guard free - needed < keepingFree else { return }
        throw LogError(
            .writeFailed, path: path,
            message: "not enough free space for a snapshot: \(size(free)) free, about \(size(needed)) needed, and \(size(keepingFree)) kept free for the log's writes (snapshot.keep_free_mb); skipped"
        )
    }

    /// `bytes` in the largest unit it fills, to a tenth (`512 bytes`, `12.5 KiB`, `3.2 MiB`,
    /// `1.0 GiB`): a small snapshot's need is not `0 MiB`.
    static func size(_ bytes: Int64) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var scale = 0
        while scale < units.count - 1, bytes >= Int64(1) << (10 * (scale + 2)) { scale += 1 }
        // Whole units and the rest apart: `bytes * 10` overflows near the top of the range.
        let shift = Int64(10 * (scale + 1))
        var whole = bytes >> shift
        var tenth = ((bytes & ((1 << shift) - 1)) * 10 + (1 << (shift - 1))) >> shift
        if tenth == 10 { (whole, tenth) = (whole + 1, 0) }
        // Rounded up to the next unit (1,048,575 bytes): said in it.
        if whole == 1024, scale < units.count - 1 { (whole, scale) = (1, scale + 1) }
        return "\(whole).\(tenth) \(units[scale])"
    }

    /// About how many bytes the snapshot takes, a little more rather than less (every number
    /// counted at 8 bytes, each announcement with room for its title index key): what the
    /// free-space check asks for.
    var estimatedSize: Int64 {
        var bytes = SnapshotFile.headerSize + 4096
        for key in keys.keys { bytes += 16 + key.utf8.count }
        bytes += 8 * (index.starts.count + index.previousOfSameID.count + index.lastSeqByID.count + index.lineTags.count)
        for announcement in model.announcements {
            bytes += 112 + announcement.title.utf8.count + (announcement.bodyText?.escaped.count ?? 0)
        }
        bytes += 16 * model.erased.count
        // The search index (waited for once; nil when none is kept): lists as they are, counts and
        // keys at eight bytes.
        bytes += search?.wait()?.storedBytes ?? 0
        return Int64(bytes)
    }

    /// The payload, in the order `SnapshotFile` describes.
    private func encode(into output: inout SnapshotOutput) {
        output.integer(keys.count)
        for (key, seq) in keys {
            output.integer(seq)
            output.integer(key.utf8.count)
            output.bytes(key.utf8)
        }

        output.integer(index.lastSeq)
        output.integers(index.starts)
        output.integers(index.previousOfSameID)
        output.integer(index.lastSeqByID.count)
        output.integers(index.lastSeqByID)
        output.integers(index.lineTags)

        output.integer(model.seq)
        output.integer(model.lastAt == nil ? 0 : 1)
        output.integer(Int(model.lastAt?.millisecondsSince1970 ?? 0))
        output.integer(model.maxId)
        // The writers that created the live announcements, each name once; then each announcement
        // names its creator by its place in this list.
        // Keyed by bytes: names that Swift's String equality takes as one (canonically equivalent
        // spellings) are different writers to the store.
        var writers: [[UInt8]: Int] = [:]
        var names: [String] = []
        for announcement in model.announcements where writers[Array(announcement.createdBy.utf8)] == nil {
            writers[Array(announcement.createdBy.utf8)] = names.count
            names.append(announcement.createdBy)
        }
        output.integer(names.count)
        for name in names {
            output.integer(name.utf8.count)
            output.bytes(name.utf8)
        }
        output.integer(model.count)
        for announcement in model.announcements {
            output.integer(announcement.id)
            output.integer(announcement.revision)
            output.integer(writers[Array(announcement.createdBy.utf8)] ?? 0)
            output.integer(Int(announcement.createdAt.millisecondsSince1970))
            output.integer(Int(announcement.updatedAt.millisecondsSince1970))
            output.integer(announcement.title.utf8.count)
            output.integer(announcement.bodyText?.escaped.count ?? -1)
            output.bytes(announcement.title.utf8)
            if let body = announcement.bodyText { output.bytes(body.escaped) }
        }

        var titled = model
        titled.buildTitleIndex()
        output.integer(titled.count)
        for key in titled.byTitle?.elements ?? SortedChunks<TitleOrder>().elements {
            output.integer(key.id)
            output.integer(key.isLong ? 1 : 0)
            output.integers(key.headWords.map { Int64(bitPattern: $0) })
        }

        output.integer(model.erased.count)
        for (id, seq) in model.erased.sorted(by: { $0.key < $1.key }) {
            output.integer(id)
            output.integer(seq)
        }

        encodeSearchIndex(into: &output)
    }

    /// The search index: -1 for none, else the number of announcements it covers, its largest id,
    /// the number of words, then per word in byte order its length, its bytes and its two sets
    /// (titles; titles or bodies), each as its number of blocks, then per block its key, its kind
    /// (0: a list, then its length and its 16-bit ids, two little-endian bytes each; 1: a bitmap,
    /// then its count and its 1,024 words).
    private func encodeSearchIndex(into output: inout SnapshotOutput) {
        guard let index = search?.wait() else {
            output.integer(-1)
            return
        }
        output.integer(index.count)
        output.integer(index.maxId)
        output.integer(index.wordCount)
        func encode(_ set: PostingSet) {
            let blocks = set.blocks
            output.integer(blocks.count)
            for (key, block) in zip(set.keys, blocks) {
                output.integer(Int(key))
                switch block {
                case .list(let ids):
                    output.integer(0)
                    output.integer(ids.count)
                    output.bytes(ids.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] })
                case .bitmap(let words, let count):
                    output.integer(1)
                    output.integer(count)
                    output.integers(words)
                }
            }
        }
        index.forEachTerm { word, title, any in
            output.integer(word.count)
            output.bytes(word)
            encode(title)
            encode(any)
        }
    }
}
