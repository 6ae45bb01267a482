import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// A log restored from an older backup gives the seqs after the backup's end again, to other
/// events: the ETags a client kept from the lost history must match nothing, while those of a log
/// that only restarted still match.
@Suite struct RestoredLogAPITests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The reads whose ETags a client keeps: an announcement (JSON, XML), lists (plain, gzip), a
    /// history; the last, announcement 2, was not edited (its revision is line 2, before the
    /// backup's end: both histories hold it).
    static let reads: [(uri: String, headers: HTTPFields)] = [
        ("/announcements/1", [:]),
        ("/announcements/1", [.accept: "application/xml"]),
        ("/announcements?max=100", [:]),
        ("/v1/announcements?max=100", [.acceptEncoding: "gzip"]),
        ("/announcements/1/history", auditor),
        ("/announcements/2", [:]),
    ]

    /// A server over the store on `path` (seeded with the reference when empty), snapshots at close when `snapshots`.
    func withServer(_ path: String, snapshots: Bool, _ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let policy = snapshots ? SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil) : .off
        let store = try await EventStore.open(path: path, seed: reference, snapshots: policy, logger: quiet)
        let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access(testTokens))
        try await buildApplication(store: store, settings: settings, logger: quiet).test(.router) { client in try await test(client) }
        await store.close()
    }

    /// Each read's ETag.
    static func tags(_ client: any TestClientProtocol) async throws -> [String] {
        var tags: [String] = []
        for read in reads {
            tags.append(try await client.execute(uri: read.uri, method: .get, headers: read.headers) { response in
                #expect(response.status == .ok, "\(read.uri)")
                return try #require(response.headers[.eTag], "\(read.uri)")
            })
        }
        return tags
    }

    /// Each read's status with `If-None-Match` set to its tag in `tags`.
    static func statuses(_ client: any TestClientProtocol, ifNoneMatch tags: [String]) async throws -> [HTTPResponse.Status] {
        var statuses: [HTTPResponse.Status] = []
        for (read, tag) in zip(reads, tags) {
            var headers = read.headers
            headers[.ifNoneMatch] = tag
            statuses.append(try await client.execute(uri: read.uri, method: .get, headers: headers) { $0.status })
        }
        return statuses
    }

    static func edit(_ client: any TestClientProtocol, title: String, ifMatch tag: String? = nil) async throws -> HTTPResponse.Status {
        var headers = alice
        headers[.ifMatch] = tag
        return try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"\#(title)"}"#)) { $0.status }
    }

    @Test("after a restore from an older backup the lost history's ETags match nothing (200, 412); a restarted log's still match (304), from a full replay or a snapshot")
    func restoredFromOlderBackup() async throws {
        let folder = NSTemporaryDirectory() + "restored-log-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/log.jsonl"
        let lost = Mutex<[String]>([])
        // The reference seed (seqs 1 to 6), then an edit of announcement 1 (seq 7), which a client reads.
        try await withServer(path, snapshots: false) { client in
            #expect(try await Self.edit(client, title: "The edit the backup lacks") == .ok)
            let tags = try await Self.tags(client)
            lost.withLock { $0 = tags }
        }
        let kept = lost.withLock { $0 }
        #expect(kept[0].hasPrefix("\"1-7-") && kept[2].hasPrefix("\"list-") && kept[5].hasPrefix("\"2-2-"), "\(kept)")
        let backup = try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: UInt8(ascii: "\n")).prefix(6)

        // Restarted, the same log names its lines as before: from a full replay (the last line's
        // tag from its hash, the others' from the next line's prev: announcement 2's), twice (the
        // second writes a snapshot at close), then from the snapshot.
        for snapshots in [false, true, true] {
            try await withServer(path, snapshots: snapshots) { client in
                let tags = try await Self.tags(client)
                let statuses = try await Self.statuses(client, ifNoneMatch: kept)
                #expect(tags == kept)
                #expect(statuses.allSatisfy { $0 == .notModified }, "\(statuses)")
            }
        }
        #expect(FileManager.default.fileExists(atPath: SnapshotFile.path(forLog: path)))

        // Restored from the backup taken at seq 6 (its log and its head record, without a
        // snapshot), another edit takes seq 7.
        try Data(backup.joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: path))
        try Data("\(LogHead(seq: 6, hash: LineHash(link: Array(backup[5]))))\n".utf8).write(to: URL(fileURLWithPath: HeadRecord.path(forLog: path)))
        try FileManager.default.removeItem(atPath: SnapshotFile.path(forLog: path))
        try await withServer(path, snapshots: false) { client in
            #expect(try await Self.edit(client, title: "The edit made after the restore") == .ok)
            let now = try await Self.tags(client)
            #expect(now[0].hasPrefix("\"1-7-"), "\(now[0])")
            for (old, new) in zip(kept, now).dropLast() { #expect(old != new) }
            #expect(kept.last == now.last, "announcement 2's revision is a line the backup holds")
            let statuses = try await Self.statuses(client, ifNoneMatch: kept)
            #expect(statuses == Array(repeating: .ok, count: Self.reads.count - 1) + [.notModified])
            // A write based on the lost revision 7 is refused; one based on this log's goes through.
            #expect(try await Self.edit(client, title: "Stale", ifMatch: kept[0]) == .preconditionFailed)
            #expect(try await Self.edit(client, title: "Current", ifMatch: now[0]) == .ok)
        }
    }
}
