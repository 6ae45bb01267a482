@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import AnnouncementsHTTP

/// Start-up from a snapshot, seen through the API: every answer is the same, byte for byte, as
/// after a full replay of the log.
@Suite struct SnapshotAPITests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Status, ETag and body of each of `uris`, from a server over the store opened on `path`, as
    /// an auditor (who reads history and past states too).
    func answers(_ path: String, snapshots: SnapshotPolicy, uris: @escaping @Sendable (ReadModel) -> [String]) async throws -> [String] {
        let store = try await EventStore.open(path: path, snapshots: snapshots, logger: quiet)
        let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([("audrey", "audrey-secret", .auditor)]))
        let app = buildApplication(store: store, settings: settings, logger: quiet)
        let collected = try await app.test(.router) { client in
            var collected: [String] = []
            for uri in uris(store.snapshot) {
                try await client.execute(uri: uri, method: .get, headers: auditor) { response in
                    #expect(response.status != .unauthorized && response.status != .forbidden, "\(uri)")
                    collected.append("\(uri) \(response.status.code) \(response.headers[.eTag] ?? "-") \(String(buffer: response.body))")
                }
            }
            return collected
        }
        await store.close()
        return collected
    }

    @Test("every read answers the same after a start-up from a snapshot and the lines after it as after a full replay")
    func sameAnswers() async throws {
        let folder = NSTemporaryDirectory() + "snapshot-api-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/log.jsonl"
        let atClose = SnapshotPolicy(isEnabled: true, everyEvents: nil, everySeconds: nil)
        let first = try await EventStore.open(path: path, seed: reference, snapshots: atClose, logger: quiet)
        _ = try await first.update(id: 2, AnnouncementPatch(title: "aardvarks first"), by: "alice")
        try await first.delete(id: 3, by: "bob")
        _ = try await first.create(AnnouncementDraft(title: "Zürich office", body: "<p>caf\u{E9} \"quoted\"</p>"), by: "alice", key: "k1")
        await first.close()
        let snapshotSeq = try LogReader(path: path).replay().model.seq
        // Lines after the snapshot: edits and deletes of what it holds, and a new id.
        let second = try await EventStore.open(path: path, logger: quiet)
        _ = try await second.update(id: 1, AnnouncementPatch(title: "Zebra", body: .clear), by: "alice")
        try await second.delete(id: 2, by: "bob")
        _ = try await second.create(AnnouncementDraft(title: "Later", body: "<p>later</p>"), by: "carol")
        await second.close()

        let uris: @Sendable (ReadModel) -> [String] = { model in
            var uris = ["/health", "/events?after=0&limit=1000", "/events?after=\(snapshotSeq - 1)&limit=3"]
            for prefix in ["", "/v1", "/v2"] {
                for sort in ["id", "title"] {
                    for order in ["asc", "desc"] {
                        uris.append("\(prefix)/announcements?sort=\(sort)&order=\(order)&max=100")
                        uris.append("\(prefix)/announcements?sort=\(sort)&order=\(order)&max=2&offset=1")
                    }
                }
                for id in 1...(model.maxId + 1) {
                    uris += ["\(prefix)/announcements/\(id)", "\(prefix)/announcements/\(id)/history", "\(prefix)/announcements/\(id)?asOf=\(snapshotSeq)"]
                }
            }
            return uris
        }
        #expect(try LogReader(path: path).replayUsingSnapshot().snapshot.seq == snapshotSeq, "the snapshot is used")
        let full = try await answers(path, snapshots: .off, uris: uris)
        let fromSnapshot = try await answers(path, snapshots: atClose, uris: uris)
        #expect(full.count > 50)
        #expect(fromSnapshot == full)
        #expect(full.contains { $0.hasPrefix("/health 200") && $0.contains("\"seq\":\(snapshotSeq + 3)") })
    }
}
