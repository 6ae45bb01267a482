@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// A live server on an empty log in `folder` whose writes and syncs go through `operations`.
private func withServer(
    in folder: String,
    operations: FileOperations,
    _ test: @Sendable (any TestClientProtocol, EventStore) async throws -> Void
) async throws {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let store = try await EventStore.open(path: folder + "/log.jsonl", rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
    let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([("alice", "alice-secret", .editor)]))
    try await buildApplication(store: store, settings: settings, logger: quiet).test(.live) { client in try await test(client, store) }
    await store.close()
}

@Suite struct HealthAPITests {
    @Test("GET /health tells the log's head, the same SEQ:SHA256 that verify prints for the log")
    func head() async throws {
        let folder = NSTemporaryDirectory() + "health-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withServer(folder: folder) { client, store in
            try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"title":"Renamed"}"#)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.object["status"] as? String == "ok")
                #expect(response.object["seq"] as? Int == 7)
                #expect(response.object["reason"] == nil)
                let verified = try LogReader(path: store.path).verify()
                #expect(verified.isSound)
                #expect(response.object["head"] as? String == verified.head?.description)
                #expect((response.object["head"] as? String)?.hasPrefix("7:") == true)
                #expect(response.headers[.cacheControl] == "no-store", "a cached 200 would hide the next 503")
            }
        }
        try await withServer(seed: [], folder: folder + "-empty") { client, _ in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(String(buffer: response.body) == #"{"status":"ok","seq":0,"head":null}"#)
            }
        }
        try? FileManager.default.removeItem(atPath: folder + "-empty")
    }

    @Test("GET /health is 503 degraded, with the reason, after a failed sync, and 200 ok again once a write succeeds")
    func degradedAfterFailedSync() async throws {
        let folder = NSTemporaryDirectory() + "health-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fail = Mutex(false)
        // One sync fails (a transient device error); the store's undo then syncs fine.
        let operations = FileOperations.withFailingSync { fail.withLock { failing in defer { failing = false }; return failing } }
        try await withServer(in: folder, operations: operations) { client, _ in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Kept"}"#)) { #expect($0.status == .created) }
            fail.withLock { $0 = true }
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Lost"}"#)) { response in
                #expect(response.status == .serviceUnavailable)
                let message = try #require(response.object["message"] as? String)
                #expect(message.contains("cannot sync the log to disk"))
                #expect(!message.contains(folder), "where the log is stays in the server's log")
            }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.object["status"] as? String == "degraded")
                let reason = try #require(response.object["reason"] as? String)
                #expect(reason.contains("the last write to the log failed"))
                #expect(reason.contains("cannot sync the log to disk"))
                #expect(!reason.contains(folder), "anyone may ask /health: where the log is stays in the server's log")
                #expect(response.object["seq"] as? Int == 1, "the lost write is not counted")
            }
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Next"}"#)) { #expect($0.status == .created) }
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.object["status"] as? String == "ok")
                #expect(response.object["reason"] == nil)
                #expect(response.object["seq"] as? Int == 2)
            }
        }
    }

    @Test("GET /health is 503 while the log is unusable (a failed write could not be undone), until a restart")
    func unusableUntilRestart() async throws {
        let folder = NSTemporaryDirectory() + "health-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withServer(in: folder, operations: .withFailingSync { true }) { client, _ in
            for title in ["First", "Second"] {
                try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"\#(title)"}"#)) { #expect($0.status == .serviceUnavailable) }
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(response.object["status"] as? String == "degraded")
                    #expect((response.object["reason"] as? String)?.hasPrefix("the log is unusable") == true)
                    #expect((response.object["reason"] as? String)?.contains("restart the server") == true)
                }
            }
            // Reads still work.
            try await client.execute(uri: "/announcements", method: .get) { #expect($0.status == .ok) }
        }
        try await withServer(in: folder, operations: .system) { client, _ in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Third"}"#)) { #expect($0.status == .created) }
        }
    }
}
