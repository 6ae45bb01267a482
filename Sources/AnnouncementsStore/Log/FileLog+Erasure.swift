import AnnouncementsDomain
import Crypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Erasure in the file: lines overwritten in place by their sealed forms (same length), crash-safe
/// through a journal beside the log (`<log>.erasing`) that holds the new bytes (never the erased
/// ones): written and synced before the first byte of the log changes, applied again by the next
/// open or the next erasure when a crash or a failure came in between, removed once the log is synced.
///
/// Journal: `ANNOERAS`, the SHA-256 of the rest, then per line its offset and length (64-bit
/// little-endian) and its new bytes. A journal whose checksum fails was torn while it was being
/// written, before the log was touched: it is removed.
extension FileLog {
    public var erasesInPlace: Bool { true }

    /// The journal of an erasure in progress: beside the file the log names, through links (as an
    /// upgrade's and an import's copies are), so that the log opened by another name (a link, or
    /// the file a link names) finds it.
    static func journalPath(forLog path: String) -> String {
        FileIO.resolved(path) + ".erasing"
    }

    /// The journals an erasure may have left: `journalPath`, and beside the name the log was
    /// opened by, where versions before 1.34.0 wrote it.
    static func journalPaths(forLog path: String) -> [String] {
        let journal = journalPath(forLog: path)
        return journal == path + ".erasing" ? [journal] : [journal, path + ".erasing"]
    }

    public func eraseDurably(_ replacements: [LineReplacement], secrets: [[UInt8]]) throws(LogError) {
        // An earlier attempt that failed after its journal (a failed sync) is finished first,
        // also when this one has nothing left to overwrite.
        try applyJournal()
        if !replacements.isEmpty {
            let journal = Self.journalPath(forLog: path)
            try writeJournal(replacements, to: journal)
            try overwrite(replacements)
            try removeJournal(journal)
        }
        try scrubSideFiles(holding: secrets)
    }

    /// Applies the journal an interrupted erasure left, if any (at open, as the writer), and
    /// removes what an interrupted upgrade or import left beside the log (a whole or partial copy
    /// of a log, erased texts and all).
    func finishInterruptedErasure() throws(LogError) {
        // Beside the file the log names, where an upgrade or an import writes them.
        let target = FileIO.resolved(path)
        for leftover in [".upgrading", ".importing"] where unlink(target + leftover) == 0 { Self.syncFolder(Self.folder(of: target)) }
        try applyJournal()
    }

    /// Applies the journal an erasure left, if any (its overwrite not known to be durable), syncs
    /// the log and removes the journal; removes a torn one.
    private func applyJournal() throws(LogError) {
        for journal in Self.journalPaths(forLog: path) where access(journal, F_OK) == 0 {
            if let replacements = try Self.readJournal(journal) { try overwrite(replacements) }
            try removeJournal(journal)
        }
    }

    /// Writes `replacements` and syncs them through a descriptor of its own, opened on the file
    /// this log has open: the writer's descriptor is the syncer's alone. On Linux a failed
    /// write-back is reported once to each open file: a sync here that met the failure of lines the
    /// syncer wrote must not take the report from the syncer's next sync, which would then call
    /// them durable.
    private func overwrite(_ replacements: [LineReplacement]) throws(LogError) {
        let overwriter = open(path, O_WRONLY | O_CLOEXEC)
        guard overwriter >= 0 else { throw LogError.system(.writeFailed, path: path, "cannot open the log to overwrite an erased line", errno: errno) }
        let (size, opened) = try FileIO.sizeAndIdentityOrClose(overwriter, path: path)
        defer { FileIO.close(overwriter) }
        guard opened == identity else {
            throw LogError(.unusable, path: path, message: "another file has the log's name now (restored or replaced while the server ran?): its lines were not overwritten; stop the server and check the log with `announcements verify`")
        }
        try readGate.writing { () throws(LogError) in
            for replacement in replacements { try checkTarget(of: replacement, size: size) }
            for replacement in replacements {
                let error = replacement.bytes.withUnsafeBytes { FileIO.write(overwriter, $0, at: replacement.position) }
                guard error == 0 else { throw LogError.system(.writeFailed, path: path, "cannot overwrite an erased line", errno: error) }
            }
        }
        // Readers see the new bytes from here on; the sync need not hold them up.
        guard operations.sync(overwriter) == 0 else {
            throw LogError.system(.writeFailed, path: path, "cannot sync the overwritten lines to disk", errno: errno)
        }
    }

    /// Refuses a replacement that would not land on the line it was made for: one not between two
    /// newlines (the one before it, or the file's start, and the one after it), or whose skeleton
    /// (the bytes before the data: seq, type, id, time and writer, which sealing keeps, and which a
    /// crash in the middle of the overwrite leaves as they were) is not what the file holds there.
    /// So a journal left beside a log that was since restored from elsewhere writes nothing into
    /// it, and says so.
    private func checkTarget(of replacement: LineReplacement, size: Int64) throws(LogError) {
        let (position, count) = (replacement.position, Int64(replacement.bytes.count))
        let sealedKey = Array(#","sealed":""#.utf8)
        let skeleton = replacement.bytes.indices.first { replacement.bytes[$0...].starts(with: sealedKey) }
        guard position >= 0, count > 0, position < size - count, let skeleton else {
            throw LogError(.writeFailed, path: path, message: "an erasure was to overwrite \(count) bytes from byte \(position), which are not a line of the log (its end is at \(size))\(Self.journalHint)")
        }
        let start = max(position - 1, 0)
        let found = try reader.bytes(from: start, count: Int(position + count + 1 - start))
        let line = found[(found.startIndex + Int(position - start))...].dropLast()
        guard position == 0 || found.first == UInt8(ascii: "\n"), found.last == UInt8(ascii: "\n"),
              line.starts(with: replacement.bytes[..<skeleton]) else {
            throw LogError(.writeFailed, path: path, message: "an erasure was to overwrite bytes \(position) to \(position + count), but the line there is not the one it sealed\(Self.journalHint)")
        }
    }

    /// What an erasure's error adds about a journal that does not fit the log.
    private static let journalHint = " (was the log replaced since the erasure began? A journal left beside it, <log>.erasing, belongs to the log it was written for: if that log is gone, remove the journal, then erase again)"

    private func removeJournal(_ journal: String) throws(LogError) {
        guard unlink(journal) == 0 || errno == ENOENT else {
            // The lines are overwritten and synced: what is left is the journal (sealed forms only).
            throw LogError.system(.copiesLeft, path: journal, "cannot remove the erasure's journal, which holds only the sealed forms of lines overwritten already: fix what stops it (its folder's permissions), or remove it by hand", errno: errno)
        }
        // Not checked: a removal that a crash undoes leaves a journal whose lines are in place
        // already, which the next open applies again to no effect.
        Self.syncFolder(Self.folder(of: journal))
    }

    /// Writes the journal and makes its name durable, before any line is overwritten: a crash in
    /// the overwrite must find it.
    private func writeJournal(_ replacements: [LineReplacement], to journal: String) throws(LogError) {
        var body: [UInt8] = []
        for replacement in replacements {
            withUnsafeBytes(of: replacement.position.littleEndian) { body.append(contentsOf: $0) }
            withUnsafeBytes(of: Int64(replacement.bytes.count).littleEndian) { body.append(contentsOf: $0) }
            body.append(contentsOf: replacement.bytes)
        }
        let file = Array("ANNOERAS".utf8) + Array(SHA256.hash(data: body)) + body
        try FileIO.create(journal, with: file, exclusive: false, what: "the erasure's journal", like: path)
        let code = operations.syncFolder(Self.folder(of: journal))
        guard code == 0 else {
            throw LogError.system(.writeFailed, path: journal, "the erasure's journal is written, but its folder cannot be synced to make it durable, so no line is overwritten", errno: code)
        }
    }

    /// The journal's replacements; nil for a torn or foreign one. A journal that cannot be read
    /// (a failing disk, a permission) is an error: it may be whole, and is not removed.
    private static func readJournal(_ journal: String) throws(LogError) -> [LineReplacement]? {
        let bytes: [UInt8]
        do throws(LogError) {
            bytes = try ReadOnlyFile(path: journal).all()
        } catch {
            throw LogError(.unreadable, path: journal, message: "cannot read the journal of an interrupted erasure (\(error.message)): fix what stops it, and the next open or erasure finishes the erasure")
        }
        guard bytes.count >= 40,
              bytes.prefix(8).elementsEqual("ANNOERAS".utf8),
              Array(SHA256.hash(data: bytes[40...])).elementsEqual(bytes[8..<40])
        else { return nil }
        var replacements: [LineReplacement] = []
        var index = 40
        func integer() -> Int64? {
            guard index + 8 <= bytes.count else { return nil }
            defer { index += 8 }
            return bytes[index..<(index + 8)].withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
        }
        while index < bytes.count {
            guard let position = integer(), let count = integer(), count >= 0, count <= Int64(bytes.count - index) else { return nil }
            replacements.append(LineReplacement(position: position, bytes: Array(bytes[index..<(index + Int(count))])))
            index += Int(count)
        }
        return replacements
    }

    /// Overwrites with zeros, syncs and removes the side files beside the log (torn lines set
    /// aside) that hold any of `secrets`.
    private func scrubSideFiles(holding secrets: [[UInt8]]) throws(LogError) {
        let folder = Self.folder(of: path)
        let prefix = (path.split(separator: "/").last.map(String.init) ?? path) + ".torn-"
        guard !secrets.isEmpty, let directory = opendir(folder) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix(prefix) { names.append(name) }
        }
        closedir(directory)
        for name in names {
            let side = folder + "/" + name
            guard let bytes = try? ReadOnlyFile(path: side).all(), secrets.contains(where: { Self.contains(bytes, $0) }) else { continue }
            let fd = open(side, O_WRONLY | O_CLOEXEC)
            if fd >= 0 {
                _ = [UInt8](repeating: 0, count: bytes.count).withUnsafeBytes { FileIO.write(fd, $0, at: 0) }
                FileIO.fullSync(fd)
                FileIO.close(fd)
            }
            guard unlink(side) == 0 else { throw LogError.system(.copiesLeft, path: side, "cannot remove a torn line that holds erased text (\(side)): remove it by hand, or fix its folder and erase again", errno: errno) }
        }
        Self.syncFolder(folder)
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
