import AnnouncementsDomain
import AnnouncementsStore
import Testing
@testable import AnnouncementsConfig

/// The `snapshot:` section: whether and how often the server writes a snapshot beside the log.
@Suite struct SnapshotSectionTests {
    func parse(_ text: String) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: [:])
    }

    @Test("without the section, snapshots are on: every 100,000 events or 10 minutes, and at shutdown, keeping 64 MiB free")
    func defaults() throws {
        let policy = try parse("").snapshot.policy
        #expect(policy == SnapshotPolicy(isEnabled: true, everyEvents: 100_000, everySeconds: 600, keepFreeBytes: 64 << 20))
    }

    @Test("reads every key; 0 turns a period off, and enabled: false turns snapshots off")
    func everyKey() throws {
        let snapshot = try parse("snapshot:\n  enabled: true\n  every_events: 5000\n  every_seconds: 0\n  keep_free_mb: 512\n").snapshot
        #expect(snapshot.policy == SnapshotPolicy(isEnabled: true, everyEvents: 5000, everySeconds: nil, keepFreeBytes: 512 << 20))
        #expect(try parse("snapshot:\n  enabled: false\n").snapshot.policy == .off)
    }

    @Test("names the line, column and key of every mistake", arguments: [
        ("snapshot:\n  every_events: -1\n", "config.yaml:2:17: snapshot.every_events: must be between 0 and 1000000000, not -1"),
        ("snapshot:\n  every_seconds: soon\n", "config.yaml:2:18: snapshot.every_seconds: expected a whole number from 0 to 31536000, found \"soon\""),
        ("snapshot:\n  enabled: yes\n", "config.yaml:2:12: snapshot.enabled: expected true or false, found `yes`"),
        ("snapshot:\n  keep_free_mb: -5\n", "config.yaml:2:17: snapshot.keep_free_mb: must be between 0 and 16777216, not -5"),
        ("snapshot:\n  every: 5\n", "config.yaml:2:3: snapshot.every: unknown key"),
        ("snapshot: on\n", "config.yaml:1:11: snapshot: expected a mapping"),
    ])
    func mistakes(text: String, message: String) {
        #expect {
            try parse(text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}
