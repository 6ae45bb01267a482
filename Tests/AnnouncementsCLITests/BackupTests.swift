import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `announcements backup`: a consistent, verified copy taken while a server writes.
@Suite struct BackupTests {
    /// What the writers share: how many posts were answered, and whether to stop.
    final class Progress: Sendable {
        let posted = Atomic(0)
        let stop = Atomic(false)
    }

    @Test("a backup taken under concurrent writes verifies, holds its snapshot, and replays to a state the server had")
    func underConcurrentWrites() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A snapshot (written when a server stops), which no new one replaces while the backup runs:
        // one that changed meanwhile is left out of the backup, by design.
        try "log: events/announcements.jsonl\ntokens:\n  alice: alice-secret\nsnapshot:\n  every_events: 0\n  every_seconds: 0\n"
            .write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        #expect(try await ServerProcess(in: folder).stopped() == 0)
        #expect(FileManager.default.fileExists(atPath: log + ".snapshot"))
        let server = try await ServerProcess(in: folder)
        let progress = Progress()
        let url = try #require(URL(string: server.url + "/announcements"))
        // Two writers, posting until told to stop.
        let writers = (0..<2).map { writer in
            Task {
                while !progress.stop.load(ordering: .relaxed) {
                    var request = URLRequest(url: url)
                    request.httpMethod = "POST"
                    request.setValue("Bearer alice-secret", forHTTPHeaderField: "Authorization")
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    request.httpBody = Data(#"{"title":"Writer \#(writer) post \#(progress.posted.load(ordering: .relaxed))","body":"<p>backed up?</p>"}"#.utf8)
                    let (_, response) = try await URLSession.shared.data(for: request)
                    #expect((response as? HTTPURLResponse)?.statusCode == 201)
                    progress.posted.add(1, ordering: .relaxed)
                }
            }
        }
        // Back up once the writers are well under way, while they go on.
        // (No time limit that a busy machine could reach: 2 minutes only stop a test that hangs.)
        let deadline = ContinuousClock.now + .seconds(120)
        while progress.posted.load(ordering: .relaxed) < 40 {
            guard ContinuousClock.now < deadline else { Issue.record("the writers did not post 40 announcements in 2 minutes"); break }
            try await Task.sleep(for: .milliseconds(25))
        }
        let destination = folder + "/backup"
        let backup = try await CLI.run(["backup", destination], in: folder, timeout: 120)
        let postedAtBackupEnd = progress.posted.load(ordering: .relaxed)
        // The writers go on a little after it, so that the log is longer than the backup.
        while progress.posted.load(ordering: .relaxed) < postedAtBackupEnd + 10 {
            guard ContinuousClock.now < deadline + .seconds(120) else { Issue.record("the writers stopped after the backup"); break }
            try await Task.sleep(for: .milliseconds(10))
        }
        progress.stop.store(true, ordering: .relaxed)
        for writer in writers { try await writer.value }
        #expect(await server.stopped() == 0)

        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.contains("backed up events/announcements.jsonl to \(destination)/announcements.jsonl"), "\(backup.stdout)")
        #expect(backup.stdout.contains("with its snapshot"))
        let head = try #require(backup.stdout.split(separator: "\n").first { $0.hasPrefix("  head: ") }?.dropFirst(8).description)
        let seq = try #require(Int(head.split(separator: ":").first ?? ""))
        #expect(seq >= 5 + 40, "the backup holds what was posted before it began")
        #expect(try String(contentsOfFile: destination + "/announcements.jsonl.head", encoding: .utf8) == head + "\n")
        let lastSeq = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count
        #expect(lastSeq > seq, "writes went on during and after the backup")

        let copy = destination + "/announcements.jsonl"
        let verified = try await CLI.run(["verify", "--log", copy, "--expect-head", head])
        #expect(verified.status == 0, "\(verified.stdout)")
        // The state the backup replays to, from its snapshot or from every line, is the one the
        // server had at that seq.
        let fromBackup = try await CLI.run(["replay", "--log", copy, "--format", "json"])
        #expect(fromBackup.stderr.contains("started from the snapshot at seq"), "the backup's snapshot is used: \(fromBackup.stderr)")
        let wholeBackup = try await CLI.run(["replay", "--log", copy, "--format", "json", "--no-snapshot"])
        let serverHad = try await CLI.run(["replay", "--log", log, "--format", "json", "--until", String(seq)])
        #expect(fromBackup.status == 0 && serverHad.status == 0)
        #expect(fromBackup.stdout == serverHad.stdout)
        #expect(wholeBackup.stdout == serverHad.stdout)
        #expect(fromBackup.stdout.hasPrefix(#"{"seq":\#(seq),"#))
    }

    @Test("export writes a new file with every line, says how many bytes it wrote and its head as verify prints it; a copy that does not verify is refused, never given its name, and not left")
    func export() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A folder that cannot be made is named with the path as typed, never the `.partial`
        // file the copy is written under; missing folders are made, as `backup` makes its own.
        let nowhere = try await CLI.run(["export", "--to", "config.yaml/copy.jsonl"], in: folder)
        #expect(nowhere.status == 73, "\(nowhere.stderr)")
        #expect(nowhere.stderr == "error: config.yaml/copy.jsonl: config.yaml is not a folder (a file, or a link to nothing, is in its place)\n", "\(nowhere.stderr)")
        let folderNamed = try await CLI.run(["export", "--to", "outdir/"], in: folder)
        #expect(folderNamed.status == 73, "\(folderNamed.stderr)")
        #expect(folderNamed.stderr == "error: outdir/ names a folder: name the file to write in it, like outdir/announcements.jsonl\n", "\(folderNamed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/outdir"), "nothing is made for it")
        let deeper = try await CLI.run(["export", "--to", "new/folders/copy.jsonl"], in: folder)
        #expect(deeper.status == 0, "\(deeper.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/new/folders/copy.jsonl"))
        let exported = try await CLI.run(["export", "--to", "copy.jsonl"], in: folder)
        #expect(exported.status == 0, "\(exported.stderr)")
        let copy = try Data(contentsOf: URL(fileURLWithPath: folder + "/copy.jsonl"))
        #expect(copy == (try Data(contentsOf: URL(fileURLWithPath: log))))
        let size = copy.count.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
        #expect(exported.stdout.hasPrefix("exported 5 events (\(size) bytes) from events/announcements.jsonl to copy.jsonl"), "\(exported.stdout)")
        let verified = try await CLI.run(["verify"], in: folder)
        let head = { (text: String) in text.split(separator: "\n").first { $0.hasPrefix("  head:") }?.split(separator: " ").last.map(String.init) }
        #expect(head(exported.stdout)?.hasPrefix("5:") == true, "\(exported.stdout)")
        #expect(head(exported.stdout) == head(verified.stdout), "\(verified.stdout)")
        // An erasure interrupted after its event (as a copy read beside a server while the erasure
        // overwrites the lines sees it): the copy would hold the erased texts, and import refuses it.
        let erased = #"{"seq":6,"type":"erased","id":1,"at":"2099-01-01T00:00:00.000Z","by":"root","data":{"reason":"personal data"}}"#
        try Data((String(decoding: copy, as: UTF8.self) + erased + "\n").utf8).write(to: URL(fileURLWithPath: log))
        let names = try FolderNames(watching: folder)
        let interrupted = try await CLI.run(["export", "--to", "interrupted.jsonl"], in: folder)
        #expect(interrupted.status == 65, "\(interrupted.stdout) \(interrupted.stderr)")
        #expect(!names.made().contains("interrupted.jsonl"), "a copy that does not verify is never given its name, even for a moment: \(names.made())")
        #expect(interrupted.stdout.contains("announcement 1 is erased here, but line"), "\(interrupted.stdout)")
        #expect(interrupted.stderr.contains("copying again, in case an erasure was overwriting a line while it was read"))
        #expect(interrupted.stderr.contains("error: events/announcements.jsonl: the copy does not verify"), "\(interrupted.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/interrupted.jsonl"), "a copy that does not verify is not left")
    }

    @Test("a snapshot beside the log from before an erasure in it (a copy put back), one this version cannot read, or one that cannot be read at all is left out of the backup, with a note")
    func snapshotFromBeforeErasureLeftOut() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A snapshot of the five events, taken while announcement 1 held its texts.
        let store = try await EventStore.open(path: log, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        await store.close()
        let snapshotPath = SnapshotFile.path(forLog: log)
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshotPath))
        #expect(before.range(of: Data("Welcome aboard".utf8)) != nil)
        let erase = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erase.status == 0, "\(erase.stderr)")
        try before.write(to: URL(fileURLWithPath: snapshotPath))

        let backup = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains("the snapshot beside it covers the log up to seq 5, before the erasure at seq 6, and may hold the erased texts; the backup has none"), "\(backup.stderr)")
        #expect(!backup.stdout.contains("with its snapshot"), "\(backup.stdout)")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder + "/saved") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/saved/" + name))
            #expect(bytes.range(of: Data("Welcome".utf8)) == nil, "\(name) holds an erased text")
        }
        // One this version cannot read (another version's, or damaged) is of no use either.
        try Data("not a snapshot".utf8).write(to: URL(fileURLWithPath: snapshotPath))
        let unreadable = try await CLI.run(["backup", "again"], in: folder)
        #expect(unreadable.status == 0, "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("the snapshot beside it is not one this version reads"), "\(unreadable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/again/announcements.jsonl.snapshot"))
        // Nor is one that cannot be read at all (here a folder in its place): the log is backed up.
        try FileManager.default.removeItem(atPath: snapshotPath)
        try FileManager.default.createDirectory(atPath: snapshotPath, withIntermediateDirectories: false)
        let folderInPlace = try await CLI.run(["backup", "third"], in: folder)
        #expect(folderInPlace.status == 0, "\(folderInPlace.stderr)")
        #expect(folderInPlace.stderr.contains("announcements.jsonl.snapshot: cannot read the snapshot (Is a directory); the backup has none"), "\(folderInPlace.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/third").sorted() == ["announcements.jsonl", "announcements.jsonl.head"])
    }

    @Test("a log cut back behind what is recorded beside it (its head's record, or its snapshot's last line) is refused by backup and export as verify and start-up refuse it: nothing is copied that would hide the loss", arguments: ["head", "snapshot"])
    func cutBackLogRefused(record: String) async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        if record == "snapshot" {
            let store = try await EventStore.open(path: log, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            await store.close()
            try FileManager.default.removeItem(atPath: HeadRecord.path(forLog: log))
        }
        #expect(FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: log)) == (record == "snapshot"))
        // Back to its first three lines, each whole: a sound chain, two acknowledged lines gone.
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        try (lines.prefix(3).joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let verified = try await CLI.run(["verify"], in: folder)
        #expect(verified.status == 1, "verify finds it: \(verified.stdout)")
        for arguments in [["backup", "saved"], ["export", "--to", "copy.jsonl"]] {
            let refused = try await CLI.run(arguments, in: folder)
            #expect(refused.status == 65, "\(arguments[0]): \(refused.stdout) \(refused.stderr)")
            // The snapshot's line is checked before any copy, the head's record as the lines are copied.
            let error = record == "head" ? "the copy does not verify (1 problem, above)" : "the log does not hold what is recorded beside it (above)"
            #expect(refused.stderr.contains("error: events/announcements.jsonl: " + error), "\(refused.stderr)")
            #expect(refused.stdout.contains(record == "head" ? "records that it held 5 lines" : "the snapshot covers the log up to line 5"), "\(refused.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder + "/saved") && !FileManager.default.fileExists(atPath: folder + "/copy.jsonl"))
    }

    @Test("a log whose only problems are breaks of the hash chain (served with --accept-broken-chain) is copied by backup and export with --accept-broken-chain, each break a note; without it refused, saying so")
    func brokenChainCopied() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[1] = lines[1].replacingOccurrences(of: "Lunch", with: "Brunch")
        try (lines.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        for arguments in [["backup", "saved"], ["export", "--to", "copy.jsonl"]] {
            let refused = try await CLI.run(arguments, in: folder)
            #expect(refused.status == 65, "\(refused.stderr)")
            #expect(refused.stderr.contains("(every one a break of the hash chain: --accept-broken-chain copies the log as it is)"), "\(refused.stderr)")
            if arguments[0] == "backup" { #expect(!FileManager.default.fileExists(atPath: folder + "/saved"), "a refused backup leaves no folder it made") }
            let copied = try await CLI.run(arguments + ["--accept-broken-chain"], in: folder)
            #expect(copied.status == 0, "\(copied.stderr)")
            #expect(copied.stderr.contains("note: events/announcements.jsonl:3: `prev` does not match the SHA-256 of line 2") && copied.stderr.contains("copied as it is (--accept-broken-chain)"), "\(copied.stderr)")
        }
        // The copies hold the log byte for byte, and the backup its head.
        let original = try Data(contentsOf: URL(fileURLWithPath: log))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/saved/announcements.jsonl")) == original)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/copy.jsonl")) == original)
        #expect(FileManager.default.fileExists(atPath: folder + "/saved/announcements.jsonl.head"))
        // A log with another problem is refused all the same.
        lines[3] = String(lines[3].dropLast())
        try (lines.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let other = try await CLI.run(["export", "--to", "again.jsonl", "--accept-broken-chain"], in: folder)
        #expect(other.status == 65 && !FileManager.default.fileExists(atPath: folder + "/again.jsonl"), "\(other.stderr)")
    }

    @Test("a backup of an empty log has no head file (a head is SEQ:SHA256 of a line, which start-up and verify --expect-head read)")
    func emptyLogBackup() async throws {
        let folder = try makeFolder(config: "log: events/announcements.jsonl\nseed: []\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let initialized = try await CLI.run(["init"], in: folder)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let backup = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backup.status == 0 && backup.stderr.contains("the log is empty: the backup has no head file"), "\(backup.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/saved") == ["announcements.jsonl"])
    }

    @Test("a backup goes into a new or empty folder; a PostgreSQL log is pointed to its own backups")
    func refusals() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await CLI.run(["backup", "saved"], in: folder)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("5 events, 2 live announcements"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/saved/announcements.jsonl.snapshot"), "no snapshot to copy")
        let mode = try FileManager.default.attributesOfItem(atPath: folder + "/saved")[.posixPermissions] as? Int
        #expect(mode == 0o700, "only its owner may enter a backup's folder: it holds every text")
        // Named with a trailing slash, in a folder made for it: the same.
        let nested = try await CLI.run(["backup", "nested/deeper/"], in: folder)
        #expect(nested.status == 0, "\(nested.stderr)")
        #expect(nested.stdout.contains("to nested/deeper/announcements.jsonl:"), "\(nested.stdout)")
        let unnamed = try await CLI.run(["backup", ""], in: folder)
        #expect(unnamed.status == 64 && unnamed.stderr.contains("name the folder to write the backup into"), "\(unnamed.stderr)")
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/nested/deeper")[.posixPermissions] as? Int == 0o700)
        // A mistyped log leaves no folder behind; a file is not a folder to back up into.
        let missing = try await CLI.run(["backup", "never", "--log", "no-such.jsonl"], in: folder)
        #expect(missing.status == 66 && missing.stderr.contains("no-such.jsonl: no such log file"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/never"))
        try Data().write(to: URL(fileURLWithPath: folder + "/a-file"))
        let file = try await CLI.run(["backup", "a-file"], in: folder)
        #expect(file.status == 73 && file.stderr.contains("a-file is a file, not a folder"), "\(file.stderr)")
        let again = try await CLI.run(["backup", "saved"], in: folder)
        #expect(again.status == 73)
        #expect(again.stderr.hasPrefix("error: saved is not empty (it holds announcements.jsonl"), "\(again.stderr)")
        #expect(again.stderr.hasSuffix("): a backup goes into a new or empty folder\n"))
        // One a killed backup left says so.
        try FileManager.default.createDirectory(atPath: folder + "/killed", withIntermediateDirectories: false)
        try Data("{".utf8).write(to: URL(fileURLWithPath: folder + "/killed/announcements.jsonl.partial"))
        let killed = try await CLI.run(["backup", "killed"], in: folder)
        #expect(killed.status == 73 && killed.stderr.contains("(it holds announcements.jsonl.partial, left by a backup that was killed or crashed"), "\(killed.stderr)")
        // A log that does not verify: refused after its tries, and nothing of the backup is left.
        var lines = try String(contentsOfFile: folder + "/events/announcements.jsonl", encoding: .utf8).split(separator: "\n").map(String.init)
        lines[1] = lines[1].replacingOccurrences(of: "Lunch", with: "Brunch")
        try (lines.joined(separator: "\n") + "\n").write(toFile: folder + "/events/announcements.jsonl", atomically: false, encoding: .utf8)
        let damaged = try await CLI.run(["backup", "damaged"], in: folder)
        #expect(damaged.status == 65)
        #expect(damaged.stdout.contains("events/announcements.jsonl:3: `prev` does not match"), "\(damaged.stdout)")
        let note = "note: events/announcements.jsonl: the copy did not verify; copying again, in case an erasure was overwriting a line while it was read\n"
        #expect(damaged.stderr.components(separatedBy: note).count == 2, "one more copy finds the same problem, and that is enough: \(damaged.stderr)")
        #expect(damaged.stderr.contains("error: events/announcements.jsonl: the copy does not verify (1 problem, above)"), "\(damaged.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/damaged"), "no part of a failed backup is left, nor the folder it made")
        // A folder that was there (empty) stays, empty.
        try FileManager.default.createDirectory(atPath: folder + "/ready", withIntermediateDirectories: false)
        #expect(try await CLI.run(["backup", "ready"], in: folder).status == 65)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/ready") == [], "the folder it was given is kept, empty")
        try "storage: postgres\npostgres:\n  url: postgres://u@127.0.0.1:1/db\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let postgres = try await CLI.run(["backup", "elsewhere"], in: folder)
        #expect(postgres.status == 64)
        #expect(postgres.stderr.contains("use PostgreSQL's backups (pg_dump, or a base backup)"))
    }
}

/// A snapshot whose header is sound but whose contents were damaged (a byte flipped past the
/// header) is left out of a backup, as one that cannot be read at all is: the copy is read whole.
@Suite struct BackupSnapshotCheckTests {
    @Test("a snapshot damaged past its header is left out of the backup, saying why; the log is backed up")
    func damagedContents() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await EventStore.open(path: log, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        await store.close()
        let snapshotPath = SnapshotFile.path(forLog: log)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: snapshotPath))
        // (Its header is the first 104 bytes: see SnapshotFile.)
        try #require(bytes.count > 104 + 40, "a snapshot with contents")
        let place = 104 + (bytes.count - 104) / 2
        bytes[place] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: snapshotPath))
        let backup = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stderr.contains("the snapshot beside it is not one this version reads (another version's, or damaged: corrupt: the contents' checksum does not match"), "\(backup.stderr)")
        #expect(!backup.stdout.contains("with its snapshot"), "\(backup.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/saved").sorted() == ["announcements.jsonl", "announcements.jsonl.head"])
    }
}

/// `announcements import` into a log file.
@Suite struct FileImportTests {
    @Test("import copies a log file into an empty log file, byte for byte; a source a server writes to is refused")
    func importFile() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let imported = try await CLI.run(["import", "--log", "copy.jsonl", "--from", "events/announcements.jsonl"], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("imported 5 events ("), "\(imported.stdout)")
        #expect(FileManager.default.contents(atPath: folder + "/copy.jsonl") == FileManager.default.contents(atPath: log))
        #expect(!FileManager.default.fileExists(atPath: folder + "/copy.jsonl.importing"))
        // The destination itself, however it is spelled, is a usage error, not a lock held by another.
        for spelling in ["events/announcements.jsonl", "./events/announcements.jsonl", "events/../events/announcements.jsonl"] {
            let itself = try await CLI.run(["import", "--log", spelling, "--from", "events/announcements.jsonl"], in: folder)
            #expect(itself.status == 64, "\(spelling): \(itself.stderr)")
            #expect(itself.stderr == "error: events/announcements.jsonl is the destination log itself\n", "\(spelling): \(itself.stderr)")
        }

        let server = try await ServerProcess(in: folder)
        let busy = try await CLI.run(["import", "--log", "other.jsonl", "--from", "events/announcements.jsonl"], in: folder)
        #expect(await server.stopped() == 0)
        #expect(busy.status == 75, "\(busy.stderr)")
        #expect(busy.stderr == "error: events/announcements.jsonl: another process is writing to this log (it holds the write lock): stop it, then try again\n")
        #expect(FileManager.default.contents(atPath: folder + "/other.jsonl") == nil, "nothing is created for a refused import")
    }

    @Test("a source that ends in a torn line is refused for what it is, with the way to import its whole lines; that copy imports")
    func importTornSource() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var torn = try Data(contentsOf: URL(fileURLWithPath: log))
        torn.append(contentsOf: Array(#"{"seq":6,"type":"cre"#.utf8))
        try torn.write(to: URL(fileURLWithPath: folder + "/torn.jsonl"))
        let refused = try await CLI.run(["import", "--log", "copy.jsonl", "--from", "torn.jsonl"], in: folder)
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("torn.jsonl: it ends in 20 bytes with no newline") && !refused.stderr.contains("does not verify"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/copy.jsonl") || (FileManager.default.contents(atPath: folder + "/copy.jsonl")?.isEmpty ?? true))
        let exported = try await CLI.run(["export", "--log", "torn.jsonl", "--to", "whole.jsonl"], in: folder)
        #expect(exported.status == 0, "\(exported.stderr)")
        let imported = try await CLI.run(["import", "--log", "copy.jsonl", "--from", "whole.jsonl"], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(FileManager.default.contents(atPath: folder + "/copy.jsonl") == FileManager.default.contents(atPath: log))
    }

    @Test("a source and a snapshot whose last change is dated past 2262 (nanoseconds past Int64) are imported and backed up, not a crash")
    func farFutureTimes() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "log: events/announcements.jsonl\nsnapshot:\n  every_events: 0\n  every_seconds: 0\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        #expect(try await ServerProcess(in: folder).stopped() == 0)
        // 2300-01-01: a time a file can be given (a clock set wrong, a restored archive).
        let future = Date(timeIntervalSince1970: 10_413_792_000)
        for path in [log, log + ".snapshot"] {
            try FileManager.default.setAttributes([.modificationDate: future], ofItemAtPath: path)
        }
        let imported = try await CLI.run(["import", "--log", "copy.jsonl", "--from", "events/announcements.jsonl"], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        let backedUp = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backedUp.status == 0, "\(backedUp.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/saved/announcements.jsonl.snapshot"), "the snapshot is in the backup")
    }

    @Test("import into an empty log whose head record says it held lines (emptied, not new) takes a source that holds them (a restore) and refuses any other, as start-up would, leaving the log as it was")
    func importIntoEmptiedLog() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let whole = try Data(contentsOf: URL(fileURLWithPath: log))
        try whole.write(to: URL(fileURLWithPath: folder + "/backup.jsonl"))
        // The first three lines: a log that lacks the recorded fifth.
        let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        try Data(lines.prefix(3).joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: folder + "/older.jsonl"))
        #expect(FileManager.default.fileExists(atPath: log + ".head"))
        try Data().write(to: URL(fileURLWithPath: log))
        let refused = try await CLI.run(["import", "--from", "older.jsonl"], in: folder)
        #expect(refused.status == 65, "\(refused.stdout) \(refused.stderr)")
        // In an import's words: of the file it imports, and what the import (not a server) does.
        #expect(refused.stderr.hasPrefix("error: older.jsonl: it ends at seq 3, but events/announcements.jsonl.head records that the log it is imported into held 5 lines (head 5:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("this import leaves that log empty. Import a backup that holds 5:"), "\(refused.stderr)")
        #expect(refused.stderr.contains("to start that log anew from older.jsonl, move the record out of the way first (mv events/announcements.jsonl.head"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("server"), "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: log) == Data(), "the log is left as it was")
        let opened = try await CLI.run(["init"], in: folder)
        #expect(opened.status == 65 && opened.stderr.contains("records that it held 5 lines"), "start-up refuses the emptied log too: \(opened.stderr)")
        // A log file gone (not emptied) with its record beside it: refused the same, and not made.
        try FileManager.default.removeItem(atPath: log)
        let gone = try await CLI.run(["import", "--from", "older.jsonl"], in: folder)
        #expect(gone.status == 65, "\(gone.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log), "no empty log is left behind")
        // A backup that holds the recorded line restores it.
        let restored = try await CLI.run(["import", "--from", "backup.jsonl"], in: folder)
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(FileManager.default.contents(atPath: log) == whole)
        let reopened = try await CLI.run(["init"], in: folder)
        #expect(reopened.status == 0, "start-up takes the restored log: \(reopened.stderr)")
    }
}
