import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// The commands on a log in PostgreSQL, against the throwaway server `make test` starts.
@Suite(.enabled(
    if: !(ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? "").isEmpty,
    "ANNOUNCEMENTS_TEST_POSTGRES_URL is not set: run `make test` (scripts/test.sh starts a throwaway PostgreSQL)"
))
struct PostgresCLITests {
    /// A config whose log is a table of its own in the test server, with one token, an admin's (the
    /// tests write and read history with it).
    static func postgresConfig(in folder: String) throws -> String {
        let url = ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? ""
        let table = "cli_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let path = folder + "/postgres.yaml"
        try """
            storage: postgres
            postgres:
              url: \(url)
              table: \(table)
              tls: disable
            tokens:
              editor: {token: secret-token, role: admin}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("import moves a file log into PostgreSQL, where verify, replay, serve and export see the same log, byte for byte")
    func roundTrip() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try Self.postgresConfig(in: folder)
        let fileHead = try await CLI.run(["verify", "--log", log], in: folder).stdout.split(separator: "\n").first { $0.hasPrefix("  head:") }

        let imported = try await CLI.run(["import", "--config", config, "--from", log], in: folder)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.hasPrefix("imported 5 events ("))
        let verified = try await CLI.run(["verify", "--config", config], in: folder)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(verified.stdout.contains("#cli_") && verified.stdout.contains(": sound"))
        #expect(verified.stdout.split(separator: "\n").first { $0.hasPrefix("  head:") } == fileHead)
        #expect(try await CLI.run(["replay", "--config", config, "--format", "json"], in: folder).stdout == (try await CLI.run(["replay", "--log", log, "--format", "json"], in: folder)).stdout)

        let history = try await CLI.run(["history", "1", "--config", config, "--format", "jsonl"], in: folder)
        #expect(history.status == 0 && history.stdout.split(separator: "\n").count == 2)
        let fileHistory = try await CLI.run(["history", "1", "--log", log, "--format", "jsonl"], in: folder)
        #expect(history.stdout == fileHistory.stdout)

        let again = try await CLI.run(["import", "--config", config, "--from", log], in: folder)
        #expect(again.status == 74)
        #expect(again.stderr.contains("the log is not empty"))

        // A server on the table appends after the imported lines; export then holds them all.
        try FileManager.default.copyItem(atPath: config, toPath: folder + "/served.yaml")
        let server = try await ServerProcess(in: folder, environment: [:], arguments: ["serve", "--port", "0", "--config", "served.yaml"])
        var request = URLRequest(url: URL(string: "\(server.url)/announcements")!)
        request.httpMethod = "POST"
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(#"{"title":"From PostgreSQL"}"#.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 201)
        #expect(await server.stopped() == 0)

        let exported = try await CLI.run(["export", "--config", config, "--to", "exported.jsonl"], in: folder)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout.hasPrefix("exported 6 events ("))
        let original = try Data(contentsOf: URL(fileURLWithPath: log))
        let copy = try Data(contentsOf: URL(fileURLWithPath: folder + "/exported.jsonl"))
        #expect(copy.prefix(original.count) == original, "the imported lines come back byte for byte")
        #expect(String(decoding: copy.dropFirst(original.count), as: UTF8.self).contains(#""title":"From PostgreSQL""#))
        #expect(try await CLI.run(["verify", "--log", "exported.jsonl"], in: folder).status == 0)

        let overwrite = try await CLI.run(["export", "--config", config, "--to", "exported.jsonl"], in: folder)
        #expect(overwrite.status == 73)
        #expect(overwrite.stderr == "error: exported.jsonl exists: this writes a new file; choose another name or remove it\n")
    }

    @Test("a PostgreSQL that cannot be reached is one line naming it, without the password, and exit 69")
    func unreachable() async throws {
        let folder = try makeFolder(config: "storage: postgres\npostgres:\n  url: postgres://app:hunter2@127.0.0.1:1/db?sslmode=disable\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["verify"], in: folder)
        #expect(result.status == 69)
        #expect(result.stderr.hasPrefix("error: postgres://app@127.0.0.1:1/db#announcement_events: cannot connect to PostgreSQL:"))
        #expect(!result.stderr.contains("hunter2"))
        // Why, and the address once (in the log's name): the message may reach /health.
        #expect(result.stderr.hasSuffix("cannot connect to PostgreSQL: connectionError: Connection refused\n"), "the system's words, not NIO's `…refused) (errno: 111)`: \(result.stderr)")
        #expect(result.stderr.components(separatedBy: "127.0.0.1").count == 2, "\(result.stderr)")
    }
}
