import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing
@testable import AnnouncementsConfig

@Suite struct ConfigurationTests {
    func parse(_ text: String, environment: [String: String] = [:]) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: environment)
    }

    @Test("an empty file gives the defaults")
    func defaults() throws {
        let configuration = try parse("")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.logPath == "events/announcements.jsonl")
        #expect(configuration.seed.isEmpty)
        #expect(configuration.tokens.isEmpty)
        #expect(configuration.rules.maxBodyBytes == ValidationRules.defaultMaxBodyBytes)
    }

    @Test("reads every key")
    func everyKey() throws {
        let configuration = try parse("""
            host: 0.0.0.0
            port: 0
            log: data/log.jsonl
            max_body_bytes: 2048
            feed_heartbeat_seconds: 5
            tokens:
              alice: env:ALICE_TOKEN
              bob: env:BOB_TOKEN
              ci: s3cret-inline
            seed:
              - title: "First"
                body: <p>one</p>
              - title: Second
                body: ~
              - title: Third
            """, environment: ["ALICE_TOKEN": "a-token", "BOB_TOKEN": ""])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 0)
        #expect(configuration.logPath == "data/log.jsonl")
        #expect(configuration.rules.maxBodyBytes == 2048)
        #expect(configuration.feedHeartbeatSeconds == 5)
        #expect(configuration.tokens == [
            .init(name: "alice", token: "a-token", source: "env:ALICE_TOKEN"),
            .init(name: "bob", token: nil, source: "env:BOB_TOKEN"),
            .init(name: "ci", token: "s3cret-inline", source: "inline"),
        ])
        #expect(configuration.enabledTokens.map(\.name) == ["alice", "ci"])
        #expect(configuration.reads == .public, "reads are public unless the config says otherwise")
        #expect(configuration.seed == [
            AnnouncementDraft(title: "First", body: "<p>one</p>"),
            AnnouncementDraft(title: "Second", body: nil),
            AnnouncementDraft(title: "Third", body: nil),
        ])
    }

    @Test("a token has a role: the short form `name: token` is an editor's, the long form names one; reads: token")
    func roles() throws {
        let configuration = try parse("""
            reads: token
            tokens:
              editor: e-secret
              writer: {token: w-secret, role: author}
              audit:
                token: env:AUDIT_TOKEN
                role: auditor
              root: {role: admin, token: r-secret}
              later: {token: env:UNSET, role: admin}
            """, environment: ["AUDIT_TOKEN": "a-secret"])
        #expect(configuration.reads == .token)
        #expect(configuration.tokens == [
            .init(name: "editor", role: .editor, token: "e-secret", source: "inline"),
            .init(name: "writer", role: .author, token: "w-secret", source: "inline"),
            .init(name: "audit", role: .auditor, token: "a-secret", source: "env:AUDIT_TOKEN"),
            .init(name: "root", role: .admin, token: "r-secret", source: "inline"),
            .init(name: "later", role: .admin, token: nil, source: "env:UNSET"),
        ])
    }

    @Test("names the file, line, column and key of every mistake", arguments: [
        ("port: eighty", "config.yaml:1:7: port: expected a whole number from 0 to 65535, found \"eighty\""),
        ("port:", "config.yaml:1:6: port: expected a whole number from 0 to 65535, found nothing (null)"),
        ("port: \"8080\"", "config.yaml:1:7: port: expected a whole number from 0 to 65535, found the quoted text \"8080\": write the number without quotes"),
        ("port: 70000", "config.yaml:1:7: port: must be between 0 and 65535, not 70000"),
        ("colour: blue", "config.yaml:1:1: colour: unknown key (expected one of: host, port, log, seed, tokens, reads, max_body_bytes, feed_heartbeat_seconds, http, snapshot, storage, postgres, log_level, log_format, metrics)"),
        ("host: a\nhost: b", "config.yaml:2:1: host: appears twice"),
        ("seed:\n  - title: ok\n  - title: fine\n  - title: [1, 2]", "config.yaml:4:12: seed[2].title: expected a string, found a list"),
        ("seed:\n  - body: <p>no title</p>", "config.yaml:2:5: seed[0]: missing `title`"),
        ("seed:\n  - title: \"   \"", "config.yaml:2:12: seed[0].title: must not be blank"),
        ("seed:\n  - title: \"Fire\\edrill\"", "config.yaml:2:12: seed[0].title: must not contain control characters (U+001B at character 5)"),
        ("seed:\n  - title: ok\n  - title: \"a\\x85b\"", "config.yaml:3:12: seed[1].title: must not contain control characters (U+0085 at character 2)"),
        (
            "seed:\n  - title: ok\n    body: \"<p>\\a</p>\"",
            "config.yaml:3:11: seed[0].body: must not contain control characters other than tab, line feed and carriage return (U+0007 at character 4)"
        ),
        ("seed:\n  - title: x\n    colour: red", "config.yaml:3:5: seed[0].colour: unknown key (expected one of: title, body)"),
        ("seed: {title: x}", "config.yaml:1:7: seed: expected a list, found a mapping"),
        ("tokens: [a]", "config.yaml:1:9: tokens: expected a mapping from a token's name to the token, found a list"),
        ("tokens:\n  seed: abc", "config.yaml:2:3: tokens.seed: `seed` is reserved for seed data; choose another name"),
        ("tokens:\n  a: same\n  b: same", "config.yaml:3:6: tokens.b: has the same token as `a`: each name needs its own"),
        ("tokens:\n  a: {token: x, role: boss}", "config.yaml:2:23: tokens.a.role: must be one of `author`, `editor`, `auditor`, `admin`, not \"boss\""),
        ("tokens:\n  a: {role: auditor}", "config.yaml:2:6: tokens.a: missing `token` (a literal token, or env:NAME)"),
        ("tokens:\n  a: {token: x, rights: all}", "config.yaml:2:17: tokens.a.rights: unknown key (expected one of: token, role)"),
        ("tokens:\n  a: {token: \"env:\"}", "config.yaml:2:14: tokens.a.token: `env:` needs a variable name, like env:ANNOUNCEMENTS_TOKEN"),
        ("max_body_bytes: 16777217", "config.yaml:1:17: max_body_bytes: must be between 1 and 16777216, not 16777217"),
        ("reads: private", "config.yaml:1:8: reads: must be one of `public`, `token`, not \"private\""),
        ("tokens:\n  a: \"env:\"", "config.yaml:2:6: tokens.a: `env:` needs a variable name, like env:ANNOUNCEMENTS_TOKEN"),
        ("- just\n- a list", "config.yaml:1:1: expected a mapping, found a list"),
        // Placed where what was left open begins (what to mend), with where libyaml found it.
        ("port: [8080", "config.yaml:1:7: malformed YAML: while parsing a flow sequence: did not find expected ',' or ']' (at line 2, column 1)"),
        ("host: 127.0.0.1\nlog: \"a.jsonl\nport: 8080\n", "config.yaml:2:6: malformed YAML: while scanning a quoted scalar: found unexpected end of stream (at line 4, column 1)"),
        ("host: a\n  bad: indent", "config.yaml:2:6: malformed YAML: mapping values are not allowed in this context"),
        // A key indented wrong, lines after its mapping began: placed on its own line.
        ("host: 127.0.0.1\nhttp:\n  idle_timeout_seconds: 60\n read_timeout_seconds: 30\n", "config.yaml:4:2: malformed YAML: while parsing a block mapping: did not find expected key"),
        // A character YAML does not allow, as it is in the file (not escaped): its own line and column.
        ("host: a\nport: 80\nlog: \"x\u{1}y\"\n", "config.yaml:3:8: malformed YAML: control characters are not allowed (U+0001)"),
        ("seed:\n  - title: \"Caf\u{E9} \u{FFFE}\"\n", "config.yaml:2:18: malformed YAML: control characters are not allowed (U+FFFE)"),
        ("a: 1\n---\nb: 2", "config.yaml:2:1: expected one YAML document, found a second one"),
        // An alias's value is where the alias is, not where its anchor is.
        ("http: {idle_timeout_seconds: &t 7200,\n  read_timeout_seconds: *t}", "config.yaml:2:25: http.read_timeout_seconds: must be between 1 and 3600, not 7200"),
        ("port: !!str 8080", "config.yaml:1:7: a YAML tag (a value that starts with `!`) is not supported: write the value without it, or in quotes if it is text"),
        // A token or a password that starts with `!` or `*` is not shown.
        ("tokens:\n  a: !Hunter2secret", "config.yaml:2:6: a YAML tag (a value that starts with `!`) is not supported: write the value without it, or in quotes if it is text"),
        ("tokens:\n  a: *Hunter2secret", "config.yaml:2:6: a YAML alias (a value that starts with `*`) names no anchor before it: write the value in quotes if it is text"),
        // Nor is the file itself as one value (an env file named by mistake).
        ("ANNOUNCEMENTS_TOKEN=s3cretTOKENvalue", "config.yaml:1:1: expected a mapping, found a single value (not shown: it may be a secret)"),
        ("tokens:\n  a: \"env: A_TOKEN\"", "config.yaml:2:6: tokens.a: `env:` names a variable as a shell does (letters, digits and _, not starting with a digit, nothing around it), like env:ANNOUNCEMENTS_TOKEN; not \" A_TOKEN\""),
        // A literal token that looks like a variable would be that text: refused, naming the way.
        ("tokens:\n  a: $ANNOUNCEMENTS_TOKEN", "config.yaml:2:6: tokens.a: a config does not expand shell variables: \"$ANNOUNCEMENTS_TOKEN\" would be the token itself, as it is written; to read it from the environment, write env:ANNOUNCEMENTS_TOKEN"),
        ("tokens:\n  a: {token: \"${A_TOKEN}\"}", "config.yaml:2:14: tokens.a.token: a config does not expand shell variables: \"${A_TOKEN}\" would be the token itself, as it is written; to read it from the environment, write env:A_TOKEN"),
        ("tokens:\n  a: ENV:A_TOKEN", "config.yaml:2:6: tokens.a: a config does not expand shell variables: \"ENV:A_TOKEN\" would be the token itself, as it is written; to read it from the environment, write env:A_TOKEN"),
        ("metrics:\n  token: $METRICS_TOKEN", "config.yaml:2:10: metrics.token: a config does not expand shell variables: \"$METRICS_TOKEN\" would be the token itself, as it is written; to read it from the environment, write env:METRICS_TOKEN"),
        ("tokens:\n  a: \"env:1TOKEN\"", "config.yaml:2:6: tokens.a: `env:` names a variable as a shell does (letters, digits and _, not starting with a digit, nothing around it), like env:ANNOUNCEMENTS_TOKEN; not \"1TOKEN\""),
        ("port: 017", "config.yaml:1:7: port: must be written without leading zeros (YAML 1.1 tools read 017 as an octal number), not 017"),
        ("postgres:\n  url: env:UNSET\n", "config.yaml:2:3: postgres: is set, but `storage` is not, so the log would be the file `log` names: add `storage: postgres` to keep it in PostgreSQL (or `storage: file` to keep this section unused)"),
        ("port: 99999999999999999999", "config.yaml:1:7: port: must be between 0 and 65535, not 99999999999999999999"),
        ("port: +", "config.yaml:1:7: port: expected a whole number from 0 to 65535, found \"+\""),
        ("log: \"ev\\0x.jsonl\"", "config.yaml:1:6: log: must not contain control characters"),
        ("host: \"local\\nhost\"", "config.yaml:1:7: host: must not contain control characters"),
        ("tokens:\n  \"<<\": abc", "config.yaml:2:3: tokens.<<: YAML merge keys (`<<`) are not supported: write each token out"),
        ("tokens:\n  \"\": abc", "config.yaml:2:3: tokens.: a token's name must not be empty"),
        ("tokens:\n  \"a\\tb\": abc", "config.yaml:2:3: tokens.a\tb: a token's name must be one word, without spaces or control characters"),
        ("tokens:\n  a: \"abc\\n\"", "config.yaml:2:6: tokens.a: the token must not contain spaces, line breaks or control characters (a header cannot carry them; a file read into the variable may end with a line break)"),
        ("tokens:\n  a: |\n    abc\n", "config.yaml:2:6: tokens.a: the token must not contain spaces, line breaks or control characters (a header cannot carry them; a file read into the variable may end with a line break)"),
    ])
    func errors(text: String, expected: String) {
        #expect {
            try parse(text)
        } throws: { error in
            let description = (error as? ConfigError)?.description
            if description != expected { Issue.record("got: \(description ?? "\(error)")") }
            return description == expected
        }
    }

    @Test("a token read from the environment with a line break at its end is refused, naming the variable")
    func environmentTokenWithLineBreak() {
        #expect {
            try parse("tokens:\n  a: env:TOKEN", environment: ["TOKEN": "secret\n"])
        } throws: { error in
            (error as? ConfigError)?.description == "config.yaml:2:6: tokens.a: the token in $TOKEN must not contain spaces, line breaks or control characters (a header cannot carry them; a file read into the variable may end with a line break)"
        }
    }

    @Test("a file that is not UTF-8 is refused at the line and column of its first bad byte")
    func notUTF8() throws {
        let folder = NSTemporaryDirectory() + "config-test-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/latin1.yaml"
        _ = FileManager.default.createFile(atPath: path, contents: Data("port: 8080\nseed:\n  - title: Caf".utf8) + Data([0xE9]) + Data("\n".utf8))
        #expect {
            try Configuration.load(path: path, environment: [:])
        } throws: { error in
            (error as? ConfigError)?.description == "\(path):3:15: the config file is not valid UTF-8 here (save it as UTF-8)"
        }
    }

    @Test("a seed's body may hold tabs and line breaks")
    func seedBodyLines() throws {
        let configuration = try parse("seed:\n  - title: ok\n    body: \"<p>a</p>\\r\\n\\t<p>b</p>\"")
        #expect(configuration.seed.first?.body == "<p>a</p>\r\n\t<p>b</p>")
    }

    @Test("resolves the log against the config file's folder, and reads files")
    func loadsFiles() throws {
        let folder = NSTemporaryDirectory() + "config-test-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "log: events/x.jsonl\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        #expect(try Configuration.load(path: folder + "/config.yaml", environment: [:]).logPath == folder + "/events/x.jsonl")
        try "log: /var/log/x.jsonl\n".write(toFile: folder + "/abs.yaml", atomically: true, encoding: .utf8)
        #expect(try Configuration.load(path: folder + "/abs.yaml", environment: [:]).logPath == "/var/log/x.jsonl")
        #expect {
            try Configuration.load(path: folder + "/missing.yaml", environment: [:])
        } throws: { error in
            "\(error)".hasPrefix(folder + "/missing.yaml: cannot read the config file: No such file")
        }
    }

    @Test("aliases and anchors resolve")
    func aliases() throws {
        let configuration = try parse("""
            seed:
              - &first {title: Shared, body: <p>x</p>}
              - *first
            """)
        #expect(configuration.seed.count == 2)
        #expect(configuration.seed[1] == AnnouncementDraft(title: "Shared", body: "<p>x</p>"))
    }

    @Test("the shipped config.yaml is valid and seeds the six reference announcements")
    func shippedConfig() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config.yaml").path
        let configuration = try Configuration.load(path: path, environment: [:])
        #expect(configuration.seed.map(\.title) == [
            "Grails Quickcast #1: Grails Interceptors",
            "Grails Quickcast #2: JSON Views",
            "Grails Quickcast #3: Multi-Project Builds",
            "Grails Quickcast #4: Angular Scaffolding",
            "Retrieving Runtime Config Values In Grails 3",
            "Developing Grails 3 Applications With IntelliJ IDEA",
        ])
        #expect(configuration.seed.allSatisfy { ($0.body?.count ?? 0) >= 700 && $0.body?.hasPrefix("<p>") == true })
        #expect(configuration.enabledTokens.isEmpty, "no writer is enabled unless ANNOUNCEMENTS_TOKEN is set")
    }
}
