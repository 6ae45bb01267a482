import AnnouncementsDomain
import AnnouncementsStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Prometheus
import Testing
@testable import AnnouncementsHTTP

/// `GET /metrics`: Prometheus' text format, counts that follow the requests made, bounded labels.
@Suite struct MetricsAPITests {
    /// A live server whose store and HTTP side report to one Prometheus registry.
    func withMetricsServer(
        token: String? = nil, heartbeat: Duration = .seconds(15), maxConnections: Int? = nil, cors: CORSPolicy = CORSPolicy(),
        _ test: @Sendable (any TestClientProtocol, EventStore) async throws -> Void
    ) async throws {
        let path = NSTemporaryDirectory() + "metrics-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try await EventStore.open(
            path: path + "/log.jsonl", seed: [AnnouncementDraft(title: "One"), AnnouncementDraft(title: "Two")], logger: quiet,
            metrics: StoreMetrics(factory: factory)
        )
        let metrics = ServerMetrics(factory: factory)
        metrics.startedUp(in: .milliseconds(1500))
        var settings = ServerSettings(
            host: "127.0.0.1", port: 0, access: Access(testTokens), maxRequestBytes: 4096, feedHeartbeat: heartbeat,
            metrics: metrics, metricsEndpoint: MetricsEndpoint(token: token) { registry.emitToBuffer() }
        )
        if let maxConnections { settings.connections.maxConnections = maxConnections }
        settings.cors = cors
        try await buildApplication(store: store, settings: settings, logger: quiet).test(.live) { client in try await test(client, store) }
        await store.close()
    }

    /// Whether the metrics come to show `count` open event streams within 5 s.
    func streams(becomes count: Double, _ client: any TestClientProtocol) async throws -> Bool {
        for _ in 0..<200 {
            let body = try await client.execute(uri: "/metrics", method: .get).body
            if sample(String(buffer: body), "announcements_stream_subscribers") == count { return true }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    /// The value of the sample `name{labels}` in `text`, or nil when it is not there.
    func sample(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    @Test("requests answered on many threads, more than a burst each: once their threads' shards are counted (as a scrape does first), every one is in its route's count and duration, once")
    func metricsOfManyThreads() {
        let registry = PrometheusCollectorRegistry()
        let metrics = ServerMetrics(factory: PrometheusMetricsFactory(registry: registry))
        let threads = 8, each = 150
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for request in 0..<each {
                metrics.request(route: "/announcements", method: .get, status: request % 10 == 0 ? .notFound : .ok, duration: .microseconds(100))
            }
        }
        metrics.countAnswered()
        let text = registry.emitToString()
        #expect(sample(text, #"http_requests_total{route="/announcements",method="GET",status="2xx"}"#) == Double(threads * each * 9 / 10), "\(text)")
        #expect(sample(text, #"http_requests_total{route="/announcements",method="GET",status="4xx"}"#) == Double(threads * each / 10))
        #expect(sample(text, #"http_request_duration_seconds_count{route="/announcements",method="GET"}"#) == Double(threads * each))
    }

    @Test("after a known sequence of requests, /metrics counts them by route template, method and status class, and the store's work")
    func countsRequests() async throws {
        try await withMetricsServer { client, _ in
            for _ in 0..<3 { _ = try await client.execute(uri: "/announcements", method: .get) }
            for id in [1, 2, 999] { _ = try await client.execute(uri: "/announcements/\(id)", method: .get) }
            _ = try await client.execute(uri: "/nowhere", method: .get)
            let editor: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json"]
            for title in ["Three", "Four"] {
                let created = try await client.execute(uri: "/announcements", method: .post, headers: editor, body: ByteBuffer(string: #"{"title":"\#(title)"}"#))
                #expect(created.status == .created)
            }
            _ = try await client.execute(uri: "/announcements", method: .post, body: ByteBuffer(string: #"{"title":"x"}"#))
            _ = try await client.execute(uri: "/events", method: .trace)

            let scraped = try await client.execute(uri: "/metrics", method: .get)
            #expect(scraped.status == .ok)
            #expect(scraped.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
            let text = String(buffer: scraped.body)
            #expect(sample(text, #"http_requests_total{route="/announcements",method="GET",status="2xx"}"#) == 3, "\(text)")
            #expect(sample(text, #"http_requests_total{route="/announcements/{id}",method="GET",status="2xx"}"#) == 2, "one label for every id")
            #expect(sample(text, #"http_requests_total{route="/announcements/{id}",method="GET",status="4xx"}"#) == 1)
            #expect(sample(text, #"http_requests_total{route="NotFound",method="GET",status="4xx"}"#) == 1, "no raw path as a label")
            // (Not "999" alone: a duration's sum may hold those digits.)
            #expect(!text.contains("/nowhere") && !text.contains("/999"))
            #expect(sample(text, #"http_requests_total{route="/announcements",method="POST",status="2xx"}"#) == 2)
            #expect(sample(text, #"http_requests_total{route="/announcements",method="POST",status="4xx"}"#) == 1)
            #expect(text.contains(#"method="other""#) && !text.contains("TRACE"), "a method outside the API's is `other`")
            #expect(sample(text, #"http_request_duration_seconds_count{route="/announcements",method="GET"}"#) == 3)
            // The store: 2 seeded and 2 posted events, each sync's lines and time; nothing failed.
            #expect(sample(text, "announcements_appended_events_total") == 4)
            #expect(sample(text, "announcements_sync_lines_sum") == 4)
            #expect((sample(text, "announcements_sync_duration_seconds_count") ?? 0) >= 2)
            #expect(sample(text, "announcements_write_failures_total") == 0)
            #expect(sample(text, "announcements_log_seq") == 4)
            #expect(sample(text, "announcements_live") == 4)
            #expect((sample(text, "announcements_log_bytes") ?? 0) > 100)
            #expect(sample(text, "announcements_stream_subscribers") == 0)
            #expect(sample(text, "announcements_startup_seconds") == 1.5)
            #expect(sample(text, "announcements_erasures_unsealed") == 0)
            // The release serving, and when it started: within this test's run.
            #expect(sample(text, #"announcements_build_info{version="\#(Release.version)"}"#) == 1, "\(text)")
            let started = try #require(sample(text, "process_start_time_seconds"))
            #expect(abs(started - Date().timeIntervalSince1970) < 600, "\(started)")

            // The scrape itself is counted by the next one.
            let again = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(sample(again, #"http_requests_total{route="/metrics",method="GET",status="2xx"}"#) == 1)
        }
    }

    @Test("requests answered before they reach a route (OPTIONS, a CORS preflight, a 405) are counted under the template of the route their path is on, not NotFound")
    func answeredBeforeTheRoute() async throws {
        try await withMetricsServer(cors: CORSPolicy(origins: ["https://intranet.example"])) { client, _ in
            #expect(try await client.execute(uri: "/announcements/1", method: .options).status == .noContent)
            let preflight: HTTPFields = [.origin: "https://intranet.example", .accessControlRequestMethod: "PATCH"]
            let answer = try await client.execute(uri: "/announcements/2", method: .options, headers: preflight)
            #expect(answer.status == .noContent && answer.headers[.accessControlAllowMethods] != nil)
            #expect(try await client.execute(uri: "/announcements/1", method: .post).status == .methodNotAllowed)
            #expect(try await client.execute(uri: "/nowhere", method: .options).status == .notFound)
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(sample(text, #"http_requests_total{route="/announcements/{id}",method="OPTIONS",status="2xx"}"#) == 2, "\(text)")
            #expect(sample(text, #"http_requests_total{route="/announcements/{id}",method="POST",status="4xx"}"#) == 1)
            #expect(sample(text, #"http_requests_total{route="NotFound",method="OPTIONS",status="4xx"}"#) == 1, "no route: NotFound")
            #expect(!text.contains(#"route="NotFound",method="POST""#) && !text.contains(#"route="NotFound",method="OPTIONS",status="2xx""#))
        }
    }

    @Test("an erasure whose overwrite fails is counted in announcements_erasures_unsealed until erasing again finishes it, which answers what it finished")
    func unsealedErasureCounted() async throws {
        try await withMetricsServer { client, store in
            // A folder where the erasure's journal goes: its event is appended, the overwrite cannot start.
            let journal = store.path + ".erasing"
            try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: false)
            let admin: HTTPFields = [.authorization: "Bearer ada-secret", .contentType: "application/json"]
            let failed = try await client.execute(uri: "/announcements/1/erase", method: .post, headers: admin, body: ByteBuffer(string: #"{"reason":"personal data"}"#))
            #expect(failed.status == .serviceUnavailable)
            #expect(String(buffer: failed.body).contains("announcement 1 is erased (event 3), but its lines could not be overwritten yet"), "\(String(buffer: failed.body))")
            let during = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(sample(during, "announcements_erasures_unsealed") == 1, "\(during)")
            try FileManager.default.removeItem(atPath: journal)
            let finished = try await client.execute(uri: "/announcements/1/erase", method: .post, headers: admin, body: ByteBuffer(string: #"{"reason":"personal data"}"#))
            #expect(finished.status == .ok)
            #expect(String(buffer: finished.body) == #"{"id":1,"seq":3,"sealedLines":[1],"finishedEarlier":true}"#)
            let after = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(sample(after, "announcements_erasures_unsealed") == 0, "\(after)")
            let again = try await client.execute(uri: "/announcements/1/erase", method: .post, headers: admin, body: ByteBuffer(string: #"{"reason":"personal data"}"#))
            #expect(again.status == .gone, "nothing left to finish")
        }
    }

    @Test("with metrics.token, /metrics is a 401 without it and with another token, a 200 with it")
    func token() async throws {
        try await withMetricsServer(token: "scrape-secret") { client, _ in
            let none = try await client.execute(uri: "/metrics", method: .get)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer")
            let admin = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer ada-secret"])
            #expect(admin.status == .unauthorized, "an API token is not the metrics token")
            #expect(admin.headers[.wwwAuthenticate] == #"Bearer error="invalid_token""#)
            let malformed = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer "])
            #expect(malformed.status == .badRequest && malformed.headers[.wwwAuthenticate] == #"Bearer error="invalid_request""#)
            let cookie = try await client.execute(uri: "/metrics", method: .get, headers: [.cookie: "announcements_session=scrape-secret"])
            #expect(cookie.status == .unauthorized, "the token is sent in Authorization, not as the web client's session cookie")
            #expect(String(buffer: admin.body).contains("/metrics needs the token set as metrics.token in the config (not an API token)"), "not 'not one of the configured tokens', of a configured one")
            let scraper = try await client.execute(uri: "/metrics", method: .get, headers: [.authorization: "Bearer scrape-secret"])
            #expect(scraper.status == .ok)
            #expect(String(buffer: scraper.body).contains("announcements_log_seq 2"))
        }
    }

    @Test("an open event stream is counted as a subscriber while it is open, and no longer once its client is gone")
    func subscribers() async throws {
        // A short heartbeat: a stream notices that its client left when it next writes.
        try await withMetricsServer(heartbeat: .milliseconds(100)) { client, _ in
            // On a connection of its own (the test client's one would wait behind the stream).
            let port = try #require(client.port)
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/events")))
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            let streaming = URLSession.shared.dataTask(with: request)
            streaming.resume()
            // Cancelled below; also if anything throws first, so that no stream outlives the server.
            defer { streaming.cancel() }
            #expect(try await streams(becomes: 1, client))
            streaming.cancel()
            #expect(try await streams(becomes: 0, client))
        }
    }

    @Test("at most half of max_connections event streams are open at once: past that a stream is a 503 with Retry-After, and a page is still served")
    func streamLimit() async throws {
        try await withMetricsServer(heartbeat: .milliseconds(100), maxConnections: 4) { client, _ in
            let port = try #require(client.port)
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/events")))
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            let tasks = [URLSession.shared.dataTask(with: request), URLSession.shared.dataTask(with: request), URLSession.shared.dataTask(with: request)]
            defer { for task in tasks { task.cancel() } }
            for task in tasks.prefix(2) { task.resume() }
            #expect(try await streams(becomes: 2, client))
            try await client.execute(uri: "/events", method: .get, headers: [.accept: "text/event-stream"]) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.retryAfter] == "5")
                #expect(response.object["message"] as? String == "the server has as many event streams open as it allows (2, half of http.max_connections); retry shortly, or read GET /events page by page")
            }
            try await client.execute(uri: "/events", method: .get) { #expect($0.status == .ok) }
            // A stream's place is given back when it ends: another can open.
            tasks[0].cancel()
            #expect(try await streams(becomes: 1, client))
            tasks[2].resume()
            #expect(try await streams(becomes: 2, client), "the place of the stream that ended was given back")
        }
    }
}
