import AnnouncementsDomain
import AnnouncementsStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Testing

/// `serve` on a damaged log: exit 65 and one line saying what was found and how to go on, nothing
/// written; `--accept-broken-chain` serves a broken chain as it is.
@Suite struct StartupRefusalTests {
    /// A folder whose log holds 57 events written by a server, with its snapshot and head record.
    func folderWith57Events() async throws -> (folder: String, log: String) {
        let folder = try makeFolder(config: "log: events/announcements.jsonl\n")
        let log = folder + "/events/announcements.jsonl"
        let store = try await EventStore.open(
            path: log, snapshots: SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        for number in 1...57 { _ = try await store.create(AnnouncementDraft(title: "Announcement \(number)"), by: "alice") }
        await store.close()
        return (folder, log)
    }

    @Test("an emptied log beside its snapshot: serve exits 65 saying so and how to go on; it seeds nothing and leaves the snapshot whole")
    func emptiedLog() async throws {
        let (folder, log) = try await folderWith57Events()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let snapshot = try Data(contentsOf: URL(fileURLWithPath: log + ".snapshot"))
        try Data().write(to: URL(fileURLWithPath: log))

        let result = try await CLI.run(["serve", "--port", "0"], in: folder, timeout: 120)
        #expect(result.status == 65)
        let error = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(error.hasPrefix("error: events/announcements.jsonl: the snapshot covers the log up to line 57"), "\(result.stderr)")
        #expect(error.contains("the log is only 0 bytes"))
        #expect(error.contains("Restore the log from a backup") && error.contains("mv events/announcements.jsonl.snapshot events/announcements.jsonl.snapshot.set-aside"))
        #expect(!result.stdout.contains("listening"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: log)).isEmpty, "not seeded")
        #expect(try Data(contentsOf: URL(fileURLWithPath: log + ".snapshot")) == snapshot)
    }

    @Test("a flipped bit in a title on line 29 of 57, snapshot deleted: serve exits 65 naming the line; with --accept-broken-chain it serves the log as it is")
    func brokenChain() async throws {
        let (folder, log) = try await folderWith57Events()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.removeItem(atPath: log + ".snapshot")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: log))
        let line29 = bytes.split(separator: UInt8(ascii: "\n")).dropFirst(28).first!
        let title = try #require(line29.firstRange(of: Data(#""title":"Announcement 29""#.utf8)))
        bytes[title.lowerBound + 9] ^= 0x01  // "A" becomes "@"
        try bytes.write(to: URL(fileURLWithPath: log))

        let refused = try await CLI.run(["serve", "--port", "0"], in: folder, timeout: 120)
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("error: events/announcements.jsonl:30: the hash chain is broken: `prev` does not match the SHA-256 of line 29"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--accept-broken-chain"))

        let server = try await ServerProcess(in: folder, arguments: ["serve", "--port", "0", "--accept-broken-chain"])
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/announcements/29")!)
        #expect(String(decoding: data, as: UTF8.self).contains(#""title":"@nnouncement 29""#))
        #expect(await server.stopped() == 0)
    }
}
