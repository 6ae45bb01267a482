import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging
import Testing

/// The snapshot from the command line: `serve` writes one at shutdown, `replay` starts from it
/// unless told `--no-snapshot`, and `verify` always reads the whole log.
@Suite struct SnapshotCLITests {
    @Test("serve writes a snapshot beside the log when it stops, and loads it when it starts again")
    func serveWritesAtShutdown() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(!FileManager.default.fileExists(atPath: log + ".snapshot"))
        let server = try await ServerProcess(in: folder)
        #expect(await server.stopped() == 0)
        #expect(FileManager.default.fileExists(atPath: log + ".snapshot"))
        let replayed = try await CLI.run(["replay"], in: folder)
        #expect(replayed.stderr.contains("started from the snapshot at seq 5, replayed 0 lines after it"), "\(replayed.stderr)")
    }

    @Test("replay starts from the snapshot and prints what a full replay prints; --no-snapshot reads the whole log; verify ignores it")
    func replayAndVerify() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let verifiedBefore = try await CLI.run(["verify"], in: folder)
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let snapshotting = try await EventStore.open(path: log, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil), logger: quiet)
        await snapshotting.close()
        let tail = try await EventStore.open(path: log, logger: quiet)
        _ = try await tail.update(id: 3, AnnouncementPatch(title: "Parking moved"), by: "alice")
        await tail.close()

        let fromSnapshot = try await CLI.run(["replay", "--format", "json"], in: folder)
        let whole = try await CLI.run(["replay", "--format", "json", "--no-snapshot"], in: folder)
        #expect(fromSnapshot.status == 0 && whole.status == 0)
        #expect(fromSnapshot.stdout == whole.stdout)
        #expect(whole.stdout.contains(#""title":"Parking moved""#))
        #expect(fromSnapshot.stderr.contains("started from the snapshot at seq 5, replayed 1 lines after it"), "\(fromSnapshot.stderr)")
        #expect(!whole.stderr.contains("snapshot"))

        // A damaged snapshot: replay says so, and prints the same.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: log + ".snapshot"))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: log + ".snapshot"))
        let damaged = try await CLI.run(["replay", "--format", "json"], in: folder)
        #expect(damaged.stdout == whole.stdout)
        #expect(damaged.stderr.contains("did not use the snapshot (corrupt: "), "\(damaged.stderr)")

        let verified = try await CLI.run(["verify"], in: folder)
        #expect(verified.status == 0)
        #expect(!verified.stdout.contains("snapshot") && !verified.stderr.contains("snapshot"))
        #expect(verified.stdout.contains("events:              6"))
        #expect(verifiedBefore.stdout.contains("events:              5"))
    }
}
