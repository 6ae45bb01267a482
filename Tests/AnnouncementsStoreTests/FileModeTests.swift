import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A log's replacement and side files keep the log's owner and permissions: a private log stays
/// private, and the user who runs the server on it can still open it.
@Suite struct FileModeTests {
    private static func info(_ path: String) -> (mode: mode_t, user: uid_t, group: gid_t)? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return (status.st_mode & 0o7777, status.st_uid, status.st_gid)
    }

    /// Root can give the files another owner: then the test checks that they keep it too.
    private static var otherOwner: (uid_t, gid_t)? {
        geteuid() == 0 ? (65534, 65534) : nil
    }

    @Test("upgrade keeps the log's permissions (and, run as root, its owner)")
    func upgrade() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try (#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"Private"}}"# + "\n")
            .write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o600) == 0)
        if let (user, group) = Self.otherOwner {
            #expect(chown(path, user, group) == 0)
        } else {
            print("FileModeTests.upgrade: not root, so the owner part is not checked (only root can give the log another owner)")
        }
        let before = Self.info(path)
        let outcome = try LogUpgrade.upgrade(path: path, rules: ValidationRules())
        #expect(outcome.rewritten == 1)
        let after = Self.info(path)
        #expect(after?.mode == 0o600 && after?.user == before?.user && after?.group == before?.group, "\(String(describing: after))")
    }

    @Test("a log the store makes is readable by its owner only, whatever the umask leaves")
    func newLogIsPrivate() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let store = try await EventStore.open(path: path, rules: ValidationRules(), seed: [AnnouncementDraft(title: "Private")], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        await store.close()
        #expect(Self.info(path)?.mode == 0o600, "\(String(describing: Self.info(path)))")
    }

    @Test("upgrade of a log named through a symlink rewrites the file it names and keeps the link")
    func upgradeThroughSymlink() throws {
        let folder = TemporaryFolder()
        let target = folder.file("data.jsonl"), link = folder.file("log.jsonl")
        try (#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"Private"}}"# + "\n")
            .write(toFile: target, atomically: false, encoding: .utf8)
        #expect(symlink(target, link) == 0)
        #expect(try LogUpgrade.upgrade(path: link, rules: ValidationRules()).rewritten == 1)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target, "still a link")
        #expect((try? String(contentsOfFile: target, encoding: .utf8))?.contains(#""v":\#(Event.currentFormat)"#) == true)
        #expect(!FileManager.default.fileExists(atPath: target + ".upgrading") && !FileManager.default.fileExists(atPath: link + ".upgrading"))
    }

    @Test("a torn line's side file is as private as the log")
    func tornSideFile() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try (#"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"Private"}}"# + "\n" + #"{"seq":2,"type":"cre"#)
            .write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, 0o640) == 0)
        let store = try await EventStore.open(path: path, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        await store.close()
        let sides = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("log.jsonl.torn-") }
        #expect(sides.count == 1)
        #expect(sides.first.flatMap { Self.info(folder.path + "/" + $0) }?.mode == 0o640)
    }

    @Test("the snapshot, which holds every live text, is as private as the log (and, run as root, has its owner)")
    func snapshotFile() async throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let atClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)
        var store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Private"), by: "a")
        await store.close()
        // Neither the default mode of a new file nor that of the first snapshot: the log's own.
        #expect(chmod(path, 0o640) == 0)
        if let (user, group) = Self.otherOwner { #expect(chown(path, user, group) == 0) }
        // The snapshot is written again at the next close: now beside a private log.
        store = try await EventStore.open(path: path, snapshots: atClose, logger: quiet)
        _ = try await store.create(AnnouncementDraft(title: "Also private"), by: "a")
        await store.close()
        let snapshot = Self.info(path + ".snapshot")
        #expect(snapshot?.mode == 0o640)
        if let (user, group) = Self.otherOwner {
            #expect(snapshot?.user == user)
            #expect(snapshot?.group == group)
        }
    }
}
