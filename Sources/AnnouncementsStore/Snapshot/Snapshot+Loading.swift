import AnnouncementsDomain

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Snapshot {
    /// Loads the snapshot beside the log at `logPath`, if the log still holds the line it covers
    /// last. Checks in order of cost: the header (magic, versions, checksum), then that line in the
    /// log (one read, one hash), and only then decodes the payload, checking its checksum and that
    /// its parts hold together. Throws why it cannot be used.
    static func load(besideLog logPath: String) throws(SnapshotProblem) -> Snapshot {
        let path = SnapshotFile.path(forLog: logPath)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { throw .missing }
            throw .unreadable("cannot open \(path): \(String(cString: strerror(code)))")
        }
        defer { FileIO.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable("cannot read the size of \(path): \(String(cString: strerror(errno)))") }
        let size = Int64(info.st_size)

        let header = try SnapshotFile.Header(reading: fd, size: size, path: path)
        try header.checkSize(size)
        try check(header.tag, inLog: logPath)

        var input = SnapshotInput(fd: fd, payloadLength: header.payloadLength)
        // The read ahead must end before the file is closed (the defer above runs after this one).
        defer { input.stop() }
        let state = try decode(&input, tag: header.tag)
        guard input.isAtEnd else { throw .corrupt("\(input.remaining) bytes are left over after the contents") }
        try header.checkPayload(input.checksum)
        return Snapshot(tag: header.tag, state: state)
    }

    /// For a start-up that does not use snapshots: throws `SnapshotProblem.refusal` when the
    /// snapshot beside the log (its header's tag) covers lines the log no longer holds (or, with
    /// `logFile`, lines that file, to become the log, does not hold). A file that is not a
    /// snapshot this version reads says nothing of the log, and is left alone. Returns the seq of
    /// the line a snapshot the log still holds covers last (nil: none, or not one this reads).
    @discardableResult
    static func checkTag(besideLog logPath: String, linesIn logFile: String? = nil, remedy: RecordRemedy = .startUp) throws(LogError) -> Int? {
        let path = SnapshotFile.path(forLog: logPath)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { FileIO.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, let header = try? SnapshotFile.Header(reading: fd, size: Int64(info.st_size), path: path) else { return nil }
        do throws(SnapshotProblem) {
            try check(header.tag, inLog: logFile ?? logPath)
            return header.tag.seq
        } catch {
            if let refusal = error.refusal(logPath: logPath, remedy: remedy) { throw refusal }
            return nil
        }
    }

    /// Checks that the log still holds the tagged line, where the tag says, with its hash.
    private static func check(_ tag: SnapshotTag, inLog logPath: String) throws(SnapshotProblem) {
        let log: ReadOnlyFile
        do throws(LogError) {
            log = try ReadOnlyFile(path: logPath)
        } catch {
            throw .unreadable(error.description)
        }
        guard log.size >= tag.end else {
            if log.size == tag.end - 1, let line = try? log.bytes(from: tag.lineStart, count: tag.lineLength), LineHash(link: line) == tag.hash {
                throw .newlineLost(line: tag.seq)
            }
            throw .stale("the snapshot covers the log up to line \(tag.seq), which ends at byte \(tag.end), but the log is only \(log.size) bytes: it was cut back, emptied or replaced since")
        }
        let line: [UInt8]
        do throws(LogError) {
            line = try log.bytes(from: tag.lineStart, count: tag.lineLength + 1)
        } catch {
            throw .unreadable(error.description)
        }
        guard line.last == UInt8(ascii: "\n"), LineHash(link: line.dropLast()) == tag.hash else {
            throw .stale("the log no longer holds line \(tag.seq) as the snapshot knew it (bytes \(tag.lineStart)..<\(tag.end) hash differently): it was changed, or the log rewritten or replaced, since", line: tag.seq)
        }
    }

    /// The state, decoded in the order `SnapshotFile` describes, each part checked against the others.
    private static func decode(_ input: inout SnapshotInput, tag: SnapshotTag) throws(SnapshotProblem) -> Replay {
        var replay = Replay()
        replay.lastHash = tag.hash
        let seq = tag.seq

        // The idempotency keys.
        let keyCount = try input.count(itemSize: 16, of: "idempotency keys")
        replay.keys.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            let keySeq = try input.integer()
            let length = try input.integer()
            let key = try input.bytes(length) { String(decoding: $0, as: UTF8.self) }
            guard (1...seq).contains(keySeq) else { throw .corrupt("idempotency key \"\(key)\" names event \(keySeq), beyond seq \(seq)") }
            replay.keys[key] = keySeq
        }

        // The event index.
        let events = try input.integer()
        guard events == seq else { throw .corrupt("the index holds \(events) events, but the snapshot covers \(seq)") }
        let starts = try input.integers(events, as: Int64.self)
        let previous = try input.integers(events, as: Int.self)
        let idCount = try input.count(itemSize: 8, of: "the index's ids")
        let lastSeqByID = try input.integers(idCount, as: Int.self)
        let lineTags = try input.integers(events, as: UInt32.self)
        guard starts.first == 0, starts.last == tag.lineStart else {
            throw .corrupt("the index's lines do not run from byte 0 to the tagged line at byte \(tag.lineStart)")
        }
        for position in 1..<starts.count where starts[position] <= starts[position - 1] {
            throw .corrupt("the index's line \(position + 1) does not start after line \(position)")
        }
        for position in previous.indices where previous[position] < 0 || previous[position] > position {
            throw .corrupt("the index's event \(position + 1) names event \(previous[position]) as its previous one")
        }
        for last in lastSeqByID where last < 0 || last > seq {
            throw .corrupt("the index names event \(last) as an announcement's last, beyond seq \(seq)")
        }
        guard lineTags.last == tag.hash.tag.rawValue else {
            throw .corrupt("the index's tag of line \(seq) is not that of the tagged line's hash")
        }
        replay.index = EventIndex(starts: starts, end: tag.end, previousOfSameID: previous, lastSeqByID: lastSeqByID, lineTags: lineTags)

        // The read model.
        var model = ReadModel()
        model.seq = try input.integer()
        let hasLastAt = try input.integer()
        let lastAt = try input.integer()
        model.lastAt = hasLastAt == 1 ? Timestamp(millisecondsSince1970: Int64(lastAt)) : nil
        model.maxId = try input.integer()
        guard model.seq == seq, hasLastAt == 1, model.maxId >= 0, model.maxId == idCount else {
            throw .corrupt("the read model (seq \(model.seq), largest id \(model.maxId)) does not match the tag (seq \(seq)) and the index (\(idCount) ids)")
        }
        let writerCount = try input.count(itemSize: 8, of: "writers")
        var writers: [String] = []
        writers.reserveCapacity(writerCount)
        for _ in 0..<writerCount {
            let length = try input.count(itemSize: 1, of: "bytes of a writer's name")
            writers.append(try input.bytes(length) { String(decoding: $0, as: UTF8.self) })
        }
        let count = try input.count(itemSize: 56, of: "announcements")
        guard count <= model.maxId else { throw .corrupt("\(count) live announcements, but the largest id is \(model.maxId)") }
        var announcements = IdIndexBuilder()
        var lastId = 0
        // Where each live id is in `announcements` (-1: not live), to check the title index against.
        var positions = [Int32](repeating: -1, count: model.maxId + 1)
        for position in 0..<count {
            let (id, revision, writer, createdAt, updatedAt, titleLength, bodyLength) = try input.bytes(56) { raw in
                (raw.integer(at: 0), raw.integer(at: 8), raw.integer(at: 16), raw.integer(at: 24), raw.integer(at: 32), raw.integer(at: 40), raw.integer(at: 48))
            }
            guard id >= 1, id <= model.maxId, id > lastId, (1...seq).contains(revision), writers.indices.contains(writer), bodyLength >= -1 else {
                throw .corrupt("announcement \(position + 1) (id \(id), revision \(revision)) is out of order or out of range")
            }
            // The years a log's times can have (0000–9999), as its lines are parsed.
            guard (0...253_402_300_799_999).contains(createdAt), (0...253_402_300_799_999).contains(updatedAt) else {
                throw .corrupt("announcement \(id) has a time out of range (\(createdAt), \(updatedAt) ms)")
            }
            let title = try input.bytes(titleLength) { String(decoding: $0, as: UTF8.self) }
            var body: JSONText?
            if bodyLength >= 0 { body = try input.bytes(bodyLength) { JSONText(escaped: Array($0)) } }
            announcements.append(Announcement(
                id: id, title: title, bodyText: body, revision: revision, createdBy: writers[writer],
                createdAt: Timestamp(millisecondsSince1970: Int64(createdAt)), updatedAt: Timestamp(millisecondsSince1970: Int64(updatedAt))
            ))
            positions[id] = Int32(position)
            lastId = id
        }
        model.byId = announcements.finish()

        // The title index.
        let titled = try input.integer()
        guard titled == count else { throw .corrupt("the title index has \(titled) announcements, but \(count) are live") }
        var keys = TitleIndexBuilder()
        for _ in 0..<titled {
            let key = try input.bytes(72) { raw in
                TitleKey(
                    headWords: UnsafeRawBufferPointer(rebasing: raw[16...]),
                    id: Int(Int64(littleEndian: raw.loadUnaligned(as: Int64.self))),
                    isLong: raw.loadUnaligned(fromByteOffset: 8, as: Int64.self) != 0
                )
            }
            guard key.id >= 1, key.id <= model.maxId, positions[key.id] >= 0 else {
                throw .corrupt("the title index names id \(key.id), which is not live or is there twice")
            }
            keys.append(key)
            positions[key.id] = -1
        }
        model.byTitle = keys.finish()

        // The erased announcements, with their erased events.
        let erasedCount = try input.count(itemSize: 16, of: "erased announcements")
        for _ in 0..<erasedCount {
            let (id, erasedAt) = try input.bytes(16) { ($0.integer(at: 0), $0.integer(at: 8)) }
            guard id >= 1, id <= model.maxId, (1...seq).contains(erasedAt), model.erased[id] == nil, model.announcement(id: id) == nil else {
                throw .corrupt("erased announcement \(id) (event \(erasedAt)) is out of range, live, or there twice")
            }
            model.erased[id] = erasedAt
        }
        replay.model = model
        replay.search = try Self.searchIndex(from: &input, seq: seq, model: model)
        return replay
    }

    /// The search index the snapshot stores (see `SnapshotContents.encodeSearchIndex`); nil for none.
    private static func searchIndex(from input: inout SnapshotInput, seq: Int, model: ReadModel) throws(SnapshotProblem) -> LoadedSearchIndex? {
        let count = try input.integer()
        guard count >= 0 else { return nil }
        let maxId = try input.integer()
        guard count == model.count, (0...model.maxId).contains(maxId) else {
            throw .corrupt("the search index covers \(count) announcements up to id \(maxId), but \(model.count) are live up to id \(model.maxId)")
        }
        let wordCount = try input.count(itemSize: 24, of: "words of the search index")
        var terms: [(word: [UInt8], title: PostingSet, any: PostingSet)] = []
        terms.reserveCapacity(wordCount)
        func set(of word: Int) throws(SnapshotProblem) -> PostingSet {
            let blockCount = try input.count(itemSize: 24, of: "blocks of a word's set")
            var keys: [UInt16] = []
            var blocks: [PostingSet.Block] = []
            for _ in 0..<blockCount {
                let key = try input.integer()
                let kind = try input.integer()
                guard let key = UInt16(exactly: key), kind == 0 || kind == 1 else { throw .corrupt("word \(word) of the search index has a bad block") }
                if kind == 0 {
                    let length = try input.count(itemSize: 2, of: "ids of a block")
                    blocks.append(.list(try input.bytes(2 * length) { raw in (0..<length).map { UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8 } }))
                } else {
                    // A bitmap's count is of the bits it sets (checked against them), not of what follows.
                    let count = try input.integer()
                    blocks.append(.bitmap(try input.integers(1024, as: UInt64.self), count: count))
                }
                keys.append(key)
            }
            guard let set = PostingSet(keys: keys, blocks: blocks) else { throw .corrupt("word \(word) of the search index has a set out of order") }
            return set
        }
        for number in 0..<wordCount {
            let length = try input.count(itemSize: 1, of: "bytes of a word")
            let word = try input.bytes(length) { Array($0) }
            terms.append((word, try set(of: number), try set(of: number)))
        }
        guard let index = SearchIndex(terms: terms, count: count, maxId: maxId) else {
            throw .corrupt("the search index's words are out of order, empty, or name ids beyond \(maxId)")
        }
        return LoadedSearchIndex(index: index, seq: seq)
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian 64-bit integer at `offset`.
    @inline(__always)
    func integer(at offset: Int) -> Int {
        Int(Int64(littleEndian: loadUnaligned(fromByteOffset: offset, as: Int64.self)))
    }
}

extension SnapshotFile {
    /// Throws start-up's refusal when the snapshot beside the log at `logPath` covers lines the log
    /// no longer holds (what `verify` checks as start-up does); nothing without one this reads.
    public static func checkCoveredLines(besideLog logPath: String) throws(LogError) {
        try Snapshot.checkTag(besideLog: logPath)
    }

    /// The seq of the last line the snapshot at `path` covers, read whole: its header, its length
    /// and its contents' checksum (not decoded: what a copy of one, with no log beside it, can be
    /// checked by); or why it cannot be used (no such file, another version's, damaged).
    public static func checkedCoveredSeq(ofSnapshotAt path: String) -> Result<Int, SnapshotFileProblem> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(SnapshotFileProblem(description: "cannot open it: \(String(cString: strerror(errno)))")) }
        defer { FileIO.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(SnapshotFileProblem(description: "cannot read its size: \(String(cString: strerror(errno)))")) }
        do throws(SnapshotProblem) {
            let header = try Header(reading: fd, size: Int64(info.st_size), path: path)
            try header.checkSize(Int64(info.st_size))
            var input = SnapshotInput(fd: fd, payloadLength: header.payloadLength)
            defer { input.stop() }
            while !input.isAtEnd { try input.bytes(Int(min(input.remaining, 1 << 16))) { _ in } }
            try header.checkPayload(input.checksum)
            return .success(header.tag.seq)
        } catch {
            return .failure(SnapshotFileProblem(description: error.description))
        }
    }
}

extension SnapshotFile.Header {
    /// Throws unless the file, `size` bytes, is as long as this header says.
    func checkSize(_ size: Int64) throws(SnapshotProblem) {
        let expected = Int64(SnapshotFile.headerSize) + payloadLength
        guard size == expected else { throw .corrupt("the file is \(size) bytes, but its header says \(expected) (a write cut short?)") }
    }

    /// Throws unless `checksum`, of the contents read whole, is this header's.
    func checkPayload(_ checksum: UInt64) throws(SnapshotProblem) {
        guard checksum == payloadChecksum else { throw .corrupt("the contents' checksum does not match the header's (the file was damaged)") }
    }

    /// Reads the header of the snapshot open at `fd`, `size` bytes long (checked as `init(_:)` does).
    init(reading fd: Int32, size: Int64, path: String) throws(SnapshotProblem) {
        var bytes = [UInt8](repeating: 0, count: Int(min(size, Int64(SnapshotFile.headerSize))))
        let readError = bytes.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: 0) }
        guard readError == 0 else { throw .unreadable("cannot read \(path): \(String(cString: strerror(readError)))") }
        try self.init(bytes)
    }
}
