import Foundation
import Testing

/// A log whose data breaks today's validation rules (written before a rule, or under other limits)
/// is a sound log: every command that needs a sound log takes it.
@Suite struct RuleBreakingLogTests {
    @Test("a format-1 log with control characters in its titles is backed up, upgraded and erased; verify only warns")
    func controlCharacters() async throws {
        let folder = try TerminalOutputTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        let backup = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backup.status == 0, "\(backup.stdout)\(backup.stderr)")
        #expect(!backup.stderr.contains("did not verify"), "one copy is enough: \(backup.stderr)")

        let erasure = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erasure.status == 1 && erasure.stderr.contains("announcements upgrade"), "format 1 needs an upgrade first: \(erasure.stderr)")
        let upgrade = try await CLI.run(["upgrade"], in: folder)
        #expect(upgrade.status == 0, "\(upgrade.stdout)\(upgrade.stderr)")
        let erase = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erase.status == 0, "\(erase.stdout)\(erase.stderr)")

        let log = try String(contentsOfFile: folder + "/log.jsonl", encoding: .utf8)
        #expect(!log.contains("drill") && !log.contains("<p>a</p>"), "the erased texts are gone from the log")
        let verify = try await CLI.run(["verify"], in: folder)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("  erased lines:        1\n"))
        #expect(verify.stdout.contains("warning: log.jsonl:2: data.title must not contain control characters (U+000A at character 4)"))
    }

    @Test("a log written under a larger max_body_bytes is backed up after the limit is lowered; verify only warns")
    func lowerLimit() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\nmax_body_bytes: 10\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let line = #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"alice","data":{"title":"Long","body":"more than ten bytes"}}"#
        try (line + "\n").write(toFile: folder + "/log.jsonl", atomically: true, encoding: .utf8)
        let verify = try await CLI.run(["verify"], in: folder)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("warning: log.jsonl:1: data.body "), "\(verify.stdout)")
        let backup = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backup.status == 0, "\(backup.stdout)\(backup.stderr)")
        // With --log and --config, the log is --log's and the rules the config's; with --log
        // alone, the defaults (no config is read); a --config that does not load is an error.
        try FileManager.default.moveItem(atPath: folder + "/config.yaml", toPath: folder + "/small.yaml")
        let both = try await CLI.run(["verify", "--config", "small.yaml", "--log", "log.jsonl"], in: folder)
        #expect(both.status == 0 && both.stdout.contains("warning: log.jsonl:1: data.body "), "\(both.stdout)\(both.stderr)")
        let logAlone = try await CLI.run(["verify", "--log", "log.jsonl"], in: folder)
        #expect(logAlone.status == 0 && !logAlone.stdout.contains("warning:"), "\(logAlone.stdout)\(logAlone.stderr)")
        try "port: [\n".write(toFile: folder + "/broken.yaml", atomically: true, encoding: .utf8)
        for command in ["verify", "upgrade"] {
            let broken = try await CLI.run([command, "--config", "broken.yaml", "--log", "log.jsonl"], in: folder)
            #expect(broken.status == 78 && broken.stderr.hasPrefix("error: broken.yaml:"), "\(command): \(broken.stderr)")
        }
    }
}
