import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `serve` logs for operators: text or JSON lines, at the level asked, with the access log's
/// fields, and what start-up and shutdown did.
@Suite struct OperatorLogTests {
    /// The stderr lines of a server in `folder` run with `arguments`, after `requests` (paths).
    func serverLog(folder: String, arguments: [String] = [], environment: [String: String] = [:], requests: [String]) async throws -> [Substring] {
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, environment: environment, errorLog: errorLog, arguments: ["serve", "--port", "0"] + arguments)
        for path in requests {
            var request = URLRequest(url: try #require(URL(string: server.url + path)))
            request.setValue("Bearer alice-secret", forHTTPHeaderField: "Authorization")
            _ = try await URLSession.shared.data(for: request)
        }
        #expect(await server.stopped() == 0)
        return try String(contentsOfFile: errorLog, encoding: .utf8).split(separator: "\n")
    }

    @Test("--log-format json: every line is one JSON object with stable keys; the access log has the client, method, path with query, status, bytes, duration and request id; no credentials")
    func jsonLines() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "log: events/announcements.jsonl\ntokens:\n  alice: alice-secret\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let lines = try await serverLog(folder: folder, arguments: ["--log-format", "json"], requests: ["/health", "/announcements?max=1&sort=title"])
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "not a JSON object of strings: \(line)")
        }
        for object in objects {
            #expect(object["time"]?.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil)
            #expect(object["level"] != nil && object["label"] == "announcements" && object["message"] != nil, "\(object)")
        }
        let access = objects.filter { $0["http.method"] != nil }
        #expect(access.count == 2)
        let list = try #require(access.last)
        #expect(list["http.method"] == "GET")
        #expect(list["http.path"] == "/announcements?max=1&sort=title")
        #expect(list["http.status"] == "200")
        #expect(Int(list["http.bytes"] ?? "") ?? 0 > 10)
        #expect(Double(list["http.duration_ms"] ?? "") != nil, "\(list)")
        #expect(list["client.address"]?.hasPrefix("127.0.0.1:") == true)
        #expect(list["request.id"]?.wholeMatch(of: #/[0-9a-f]{6}-[0-9a-f]+/#) != nil)
        #expect(!lines.joined().contains("alice-secret"), "the token is never logged")
        // Start-up and shutdown say what they did.
        let messages = objects.compactMap { $0["message"] }
        #expect(objects.contains { $0["message"] == "opened the log" && $0["event.seq"] == "5" && $0["startup_ms"] != nil }, "\(messages)")
        #expect(messages.contains("writes drained, log closed and its lock released"), "\(messages)")
    }

    @Test("log_level and log_format in the config; a flag wins over them; a bad value is named")
    func levelsAndFormats() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "log: events/announcements.jsonl\nlog_level: warning\nlog_format: json\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let quiet = try await serverLog(folder: folder, requests: ["/health"])
        #expect(!quiet.isEmpty && quiet.allSatisfy { $0.hasPrefix("{") && $0.contains(#""level":"warning""#) }, "only warnings, as JSON: \(quiet)")
        #expect(!quiet.contains { $0.contains("http.method") }, "no access log at warning")
        let text = try await serverLog(folder: folder, arguments: ["--log-level", "info", "--log-format", "text"], requests: ["/health"])
        #expect(text.contains { $0.contains(#"info announcements: GET "/health" 200 "#) && $0.contains(" client.address=127.0.0.1:") && !$0.contains("http.status") }, "\(text)")
        #expect(text.contains { $0.contains("connection limits") && $0.contains(" http.max_connections=") }, "other lines keep their http.* fields: \(text)")

        // The error that stops a JSON-logging server is a JSON line too, the last one.
        try "log: events/announcements.jsonl\nlog_format: json\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/events/announcements.jsonl"))
        try log.seekToEnd()
        try log.write(contentsOf: Data("not an event\n".utf8))
        try log.close()
        let refused = try await CLI.run(["serve", "--port", "0"], in: folder)
        #expect(refused.status == 65, "\(refused.stderr)")
        let last = try #require(refused.stderr.split(separator: "\n").last.map(String.init))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: String], "not a JSON line: \(refused.stderr)")
        #expect(object["level"] == "critical" && object["message"]?.contains("announcements.jsonl:6:") == true, "\(object)")
        #expect(!refused.stderr.contains("error: "), "no text line among the JSON ones: \(refused.stderr)")

        let flag = try await CLI.run(["serve", "--log-format", "yaml"], in: folder)
        #expect(flag.status == 64)
        #expect(flag.stderr.contains("--log-format takes text, json; got \"yaml\""))
        try "log_level: loud\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let config = try await CLI.run(["serve", "--port", "0"], in: folder)
        #expect(config.status == 78)
        #expect(config.stderr.contains("config.yaml:1:12: log_level: must be one of `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`, not \"loud\""), "\(config.stderr)")
    }

    @Test("a server whose log lines' reader goes away (a closed pipe: `serve 2>&1 | tee`, a shipper that restarts) goes on serving, and stops cleanly")
    func readerOfTheLogGone() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\nseed:\n  - title: One\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Gone before the server starts: its first lines (the seed, the log opened) go nowhere.
        let server = try await ServerProcess(in: folder, errorStream: .closedPipe)
        // Each request logs its access line into the closed pipe.
        for _ in 0..<3 {
            let connection = try RawConnection(port: server.port)
            #expect(connection.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
            let response = await connection.readResponse(seconds: 10)
            #expect(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(200))")
        }
        #expect(await server.stopped() == 0, "killed by SIGPIPE (141) or failed")
    }
}
