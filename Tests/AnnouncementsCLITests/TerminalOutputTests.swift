import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing
@testable import AnnouncementsCLI

@Suite struct TerminalOutputTests {
    @Test("text is escaped the way JSON spells it, a backslash doubled, and plain text left as it is", arguments: [
        ("Fire drill", "Fire drill"), ("café … “x” £ \u{A0}", "café … “x” £ \u{A0}"),
        ("a\u{1B}[2K\rb\nc\td", #"a\u001b[2K\rb\nc\td"#), ("\u{0}\u{7}\u{7F}", #"\u0000\u0007\u007f"#),
        ("\u{85}\u{9B}", #"\u0085\u009b"#), ("\u{2028}\u{2029}", #"\u2028\u2029"#),
        ("\u{202A}\u{202E}\u{2066}\u{2069}", #"\u202a\u202e\u2066\u2069"#), ("\u{2027}\u{202F}\u{2065}\u{206A}", "\u{2027}\u{202F}\u{2065}\u{206A}"),
        (#"C:\temp \n"#, #"C:\\temp \\n"#),
    ])
    func escaped(text: String, expected: String) {
        #expect(VisibleText.escaped(text) == expected)
    }

    @Test("multi-line text keeps its line feeds and tabs, and escapes a CR and everything else")
    func multiline() {
        #expect(VisibleText.escaped("<p>a</p>\r\n\t<b>\u{1B}[31m</b>\n", multiline: true) == "<p>a</p>\\r\n\t<b>\\u001b[31m</b>\n")
    }

    /// A log another tool wrote: ESC, CR and LF in titles, ESC in a writer's name, and a bidi
    /// override, in events that are otherwise valid.
    static let log = [
        #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"alice","data":{"title":"Fire \u001b[2K\rdrill","body":"<p>a</p>\n\t<p>\u001b[31mb</p>\r\n"}}"#,
        #"{"seq":2,"type":"created","id":2,"at":"2026-11-21T09:30:01Z","by":"mallory\u001b[2K","data":{"title":"Two\nlines"}}"#,
        #"{"seq":3,"type":"edited","id":2,"at":"2026-11-21T09:30:02Z","by":"bob","data":{"title":"Two \u202esides"}}"#,
    ]

    static func folder() throws -> String {
        let folder = try makeFolder(config: "log: log.jsonl\ntokens:\n  audrey: {token: audrey-secret, role: auditor}\n")
        try (log.joined(separator: "\n") + "\n").write(toFile: folder + "/log.jsonl", atomically: true, encoding: .utf8)
        return folder
    }

    /// Whether `text` holds a byte that steers a terminal: ESC, CR, BEL or NUL.
    static func hasRawControl(_ text: String) -> Bool {
        text.utf8.contains { [0x1B, 0x0D, 0x07, 0x00].contains($0) }
    }

    @Test("replay and history print a hand-written log's controls escaped, one line per row")
    func logCommands() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let replay = try await CLI.run(["replay"], in: folder)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(!Self.hasRawControl(replay.stdout))
        #expect(replay.stdout.split(separator: "\n", omittingEmptySubsequences: false) == [
            "ID  REV  TITLE                  BODY",
            #"1   1    Fire \u001b[2K\rdrill  25 bytes"#,
            #"2   3    Two \u202esides        -"#,
            "", "2 announcements at seq 3 (log.jsonl)", "",
        ])

        let history = try await CLI.run(["history"], in: folder)
        #expect(history.status == 0, "\(history.stderr)")
        #expect(!Self.hasRawControl(history.stdout))
        let rows = history.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 4, "a header and three events: \(rows)")
        #expect(rows[1].hasSuffix(#"alice             1   "Fire \u001b[2K\rdrill" (body 25 bytes)"#))
        #expect(rows[2].hasSuffix(#"mallory\u001b[2K  2   "Two\nlines" (no body)"#))
        #expect(rows[3].hasSuffix(#"title "Two\nlines" → "Two \u202esides""#))
    }

    @Test("an error or a verify problem that quotes the log is escaped too")
    func errors() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let verify = try await CLI.run(["verify"], in: folder)
        #expect(verify.status == 0, "data written before the control-character rule is a warning, not a problem: \(verify.stdout)")
        #expect(verify.stdout.contains("warning: log.jsonl:1: data.title must not contain control characters (U+001B at character 6)"))
        #expect(verify.stdout.contains("warning: log.jsonl:2: data.title must not contain control characters (U+000A at character 4)"))
        #expect(verify.stdout.contains("log.jsonl: sound\n") && verify.stdout.contains("  rule warnings:       3 ("))
        #expect(!verify.stdout.contains("log.jsonl:3:"), "a bidi override is no control character")
        try (Self.log + [#"{"seq":4,"type":"\u001b[2Kcreated","id":3,"at":"2026-11-21T09:30:03Z","by":"a","data":{"title":"x"}}"#])
            .joined(separator: "\n").appending("\n").write(toFile: folder + "/log.jsonl", atomically: true, encoding: .utf8)
        let replay = try await CLI.run(["replay"], in: folder)
        #expect(replay.status == 65)
        #expect(replay.stderr == #"error: log.jsonl:4: event type "\u001b[2Kcreated" is not known to this version ("# + Release.version + #"), which knows created, edited, deleted, erased; upgrade"# + "\n")
        let verifyAgain = try await CLI.run(["verify"], in: folder)
        #expect(verifyAgain.stdout.contains(#"log.jsonl:4: event type "\u001b[2Kcreated" is not known"#))
        #expect(!Self.hasRawControl(verifyAgain.stdout + verifyAgain.stderr))
    }

    @Test("show, list and history --follow print a server's titles, bodies and writers escaped")
    func remoteCommands() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }

        let shown = try await CLI.run(["show", "1", "--server", server.url])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout == "id:       1\n" + #"title:    Fire \u001b[2K\rdrill"# + "\nrevision: \"1-1-00000000\"\nbody:\n<p>a</p>\n\t<p>\\u001b[31mb</p>\\r\n\n")

        let listed = try await CLI.run(["list", "--server", server.url])
        #expect(listed.stdout == "ID  TITLE\n" + #"1   Fire \u001b[2K\rdrill"# + "\n" + #"2   Two \u202esides"# + "\n1-2 of 2\n")
        let full = try await CLI.run(["list", "--api-version", "1.0", "--server", server.url])
        #expect(full.stdout.contains(#"1   Fire \u001b[2K\rdrill  25 bytes"#))

        let followed = try await CLI.run(["history", "--follow", "--until", "3", "--server", server.url, "--token", "audrey-secret"], timeout: 60)
        #expect(followed.status == 0, "\(followed.stderr)")
        let rows = followed.stdout.split(separator: "\n").map(String.init)
        try #require(rows.count == 4, "a header and three events: \(rows)")
        // Aligned with the header until a wider cell comes (the escaped writer), each edit with
        // the title it replaced.
        #expect(rows[0] == "SEQ  TIME                      EVENT    BY      ID   CHANGE")
        #expect(rows[1] == #"1    2026-11-21T09:30:00.000Z  created  alice   1    "Fire \u001b[2K\rdrill" (body 25 bytes)"#)
        #expect(rows[2] == #"2    2026-11-21T09:30:01.000Z  created  mallory\u001b[2K  2    "Two\nlines" (no body)"#)
        #expect(rows[3] == #"3    2026-11-21T09:30:02.000Z  edited   bob               2    title "Two\nlines" → "Two \u202esides""#)
        for output in [shown.stdout, listed.stdout, full.stdout, followed.stdout] {
            #expect(!Self.hasRawControl(output))
        }
    }

    @Test("a follow's error about a log shorter than where it starts takes any seq the server or --since gives, Int.max included, without a crash")
    func followErrorAtTheLargestSeq() {
        let error = HistoryCommand.followError(.positionBeyondLog(requested: .max, lastSeq: .max), after: .max)
        #expect(error.message.contains("before seq 9223372036854775807 + 1 where this follow starts"), "\(error.message)")
        #expect(error.message.contains("follow with --since 9223372036854775807 + 1"), "\(error.message)")
        let usual = HistoryCommand.followError(.positionBeyondLog(requested: 10, lastSeq: 4), after: 10)
        #expect(usual.message.contains("before seq 11 where this follow starts") && usual.message.contains("--since 5 "), "\(usual.message)")
    }
}
