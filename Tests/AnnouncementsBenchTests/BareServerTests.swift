import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsHTTP
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import AnnouncementsBench

@Suite struct BareServerTests {
    private let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test("the bare server answers GET /health with the real server's bytes for a 10-event log, as JSON, over a live socket")
    func sameBytesAsTheRealHealth() async throws {
        let folder = NSTemporaryDirectory() + "bare-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let seed = (1...10).map { AnnouncementDraft(title: "Announcement \($0)") }
        let store = try await EventStore.open(path: folder + "/log.jsonl", seed: seed, logger: quiet)
        let settings = ServerSettings(host: "127.0.0.1", port: 0)
        let real = try await buildApplication(store: store, settings: settings, logger: quiet).test(.live) { client in
            try await client.execute(uri: "/health", method: .get) { String(buffer: $0.body) }
        }
        await store.close()

        let bare = BareServer.application(host: "127.0.0.1", port: 0, logger: quiet) { _ in }
        try await bare.test(.live) { client in
            try await client.execute(uri: "/health", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.headers[.contentLength] == String(real.utf8.count))
                let body = String(buffer: response.body)
                #expect(body == BareServer.health)
                // The same shape and length: only the head's hash differs.
                #expect(body.utf8.count == real.utf8.count)
                #expect(body.prefix(35) == real.prefix(35))
            }
        }
    }

    @Test("the bare server has two routes, GET /health and POST /announcements: anything else is a 404")
    func twoRoutes() async throws {
        let bare = BareServer.application(host: "127.0.0.1", port: 0, logger: quiet) { _ in }
        try await bare.test(.router) { client in
            try await client.execute(uri: "/announcements", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/announcements/1", method: .post) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test("the bare server's POST /announcements answers 201 with the bytes it was sent, as JSON, over a live socket")
    func postEchoesItsBody() async throws {
        let sent = String(repeating: #"{"title":"Bench","body":"<p>x</p>"}"#, count: 40)
        let bare = BareServer.application(host: "127.0.0.1", port: 0, logger: quiet) { _ in }
        try await bare.test(.live) { client in
            try await client.execute(uri: "/announcements", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: sent)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.contentType] == "application/json")
                #expect(String(buffer: response.body) == sent)
            }
        }
    }

    @Test("the bare server reports the port it bound when asked for port 0")
    func reportsItsPort() async throws {
        let bound = PortBox()
        let bare = BareServer.application(host: "127.0.0.1", port: 0, logger: quiet) { port in await bound.set(port) }
        try await bare.test(.live) { client in
            try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            #expect(await bound.port == client.port)
        }
    }
}

/// The port the server reported, set from its `onListening` task.
private actor PortBox {
    var port: Int?
    func set(_ port: Int) { self.port = port }
}
