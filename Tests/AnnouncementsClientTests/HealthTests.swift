@testable import AnnouncementsClient
@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import AnnouncementsHTTP
import Foundation
import HummingbirdTesting
import Testing

@Suite struct HealthTests {
    @Test("health() of a server that cannot write is degraded, with the reason, not an error")
    func degraded() async throws {
        let folder = NSTemporaryDirectory() + "client-health-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await EventStore.open(path: folder + "/log.jsonl", rules: ValidationRules(), seed: [], logger: quiet, operations: .withFailingSync { true })
        let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([("alice", "alice-secret", .editor)]))
        try await buildApplication(store: store, settings: settings, logger: quiet).test(.live) { client in
            let port = try #require(client.port)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let api = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            #expect(try await api.health() == Health(status: "ok", seq: 0))
            await #expect { try await api.create(title: "Lost", body: nil) } throws: { ($0 as? ClientError)?.statusCode == 503 }
            let health = try await api.health()
            #expect(health.status == "degraded")
            #expect(health.seq == 0 && health.head == nil)
            #expect(health.reason?.hasPrefix("the log is unusable") == true)
        }
        await store.close()
    }
}
