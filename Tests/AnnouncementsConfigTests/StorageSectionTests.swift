import AnnouncementsPostgres
import Testing
@testable import AnnouncementsConfig

/// `storage:` and `postgres:`: where the log lives.
@Suite struct StorageSectionTests {
    func parse(_ text: String, environment: [String: String] = [:]) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: environment)
    }

    @Test("the file is the default; a postgres: section beside storage: file written out is unused (without storage, it is an error: see ConfigurationTests)")
    func fileByDefault() throws {
        #expect(try parse("").storage == .file)
        #expect(try parse("storage: file\n").storage == .file)
        #expect(try parse("storage: file\npostgres:\n  url: env:UNSET\n").storage == .file, "an unused section's variables are not needed")
        #expect(try parse("storage: file\npostgres:\n").storage == .file, "an empty section is none, as every empty section is")
        #expect(try parse("postgres:\n").storage == .file)
    }

    @Test("postgres: a URL, its password and TLS from the environment or the section, and a table")
    func postgres() throws {
        let text = """
            storage: postgres
            postgres:
              url: env:DB_URL
              password: env:DB_PASSWORD
              table: intranet_events
              tls: require
            """
        let environment = ["DB_URL": "postgres://app:in%20url@db.example:6432/intranet?sslmode=disable", "DB_PASSWORD": "s3cret"]
        let settings = PostgresSettings(host: "db.example", port: 6432, user: "app", password: "s3cret", database: "intranet", tls: .require, table: "intranet_events")
        #expect(try parse(text, environment: environment).storage == .postgres(settings))
        let inline = try parse("storage: postgres\npostgres:\n  url: postgresql://app:p%40ss@localhost/db\n").storage
        #expect(inline == .postgres(PostgresSettings(host: "localhost", user: "app", password: "p@ss", database: "db")))
        #expect(settings.description == "postgres://app@db.example:6432/intranet#intranet_events", "no password in messages")
        let encoded = try parse("storage: postgres\npostgres:\n  url: postgres://app:a%2541@h/db\n").storage
        #expect(encoded == .postgres(PostgresSettings(host: "h", user: "app", password: "a%41", database: "db")), "decoded once")
    }

    @Test("a password whose variable is unset or empty leaves the URL's in place")
    func unsetPasswordKeepsTheURLs() throws {
        let text = "storage: postgres\npostgres:\n  url: postgres://app:from-url@h/db\n  password: env:DB_PASSWORD\n"
        let fromURL = PostgresSettings(host: "h", user: "app", password: "from-url", database: "db")
        #expect(try parse(text).storage == .postgres(fromURL))
        #expect(try parse(text, environment: ["DB_PASSWORD": ""]).storage == .postgres(fromURL))
        var replaced = fromURL
        replaced.password = "s3cret"
        #expect(try parse(text, environment: ["DB_PASSWORD": "s3cret"]).storage == .postgres(replaced))
        // A password read from a file with its last line break: refused, not sent with it.
        #expect {
            try parse(text, environment: ["DB_PASSWORD": "s3cret\n"])
        } throws: { error in
            "\(error)" == "config.yaml:4:13: postgres.password: the value in $DB_PASSWORD holds a line break or another control character (a file read into the variable may end with one): remove it"
        }
    }

    @Test("postgres.advertise: the address the other nodes send writes to, http://HOST:PORT, without a trailing slash")
    func advertise() throws {
        let text = "storage: postgres\npostgres:\n  url: postgres://app@h/db\n  advertise: http://10.0.0.11:8080/\n"
        #expect(try parse(text).storage.postgres?.advertise == "http://10.0.0.11:8080")
        #expect(try parse("storage: postgres\npostgres:\n  url: postgres://app@h/db\n").storage.postgres?.advertise == nil)
    }

    @Test("names the line, column and key of every mistake, never the password", arguments: [
        ("storage: sqlite\n", "config.yaml:1:10: storage: expected file or postgres"),
        ("storage: postgres\n", "config.yaml:1:10: storage: `storage: postgres` needs a `postgres:` section"),
        ("storage: postgres\npostgres:\n  table: t\n", "config.yaml:3:3: postgres: missing `url`"),
        ("storage: postgres\npostgres:\n  url: env:DB_URL\n", "config.yaml:3:8: postgres.url: the environment variable DB_URL is not set"),
        ("storage: postgres\npostgres:\n  url: mysql://a@b/c\n", "config.yaml:3:8: postgres.url: the PostgreSQL URL must look like"),
        ("storage: postgres\npostgres:\n  url: postgres://a:hunter2@b\n", "config.yaml:3:8: postgres.url: the PostgreSQL URL names no database"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  advertise: http://u:hunter2@x:1\n", "config.yaml:4:14: postgres.advertise: the address to advertise must look like http://HOST:PORT (how the other nodes reach this one: its port written out, no path, no user or password), not \"http://…@x:1\""),
        ("storage: postgres\npostgres:\n  url: postgres://a@b:70000/c\n", "config.yaml:3:8: postgres.url: the PostgreSQL URL's port must be from 1 to 65535, not 70000"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c?ssl=1\n", "config.yaml:3:8: postgres.url: the PostgreSQL URL has an unknown parameter ssl"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  table: Events;drop\n", "config.yaml:4:10: postgres.table: the table name"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  table: user\n", "config.yaml:4:10: postgres.table: the table name \"user\" is a word SQL reserves: choose another, such as user_events"),
        ("storage: postgres\npostgres:\n", "config.yaml:1:10: storage: `storage: postgres` needs a `postgres:` section"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  advertise: http://10.0.0.11\n", "config.yaml:4:14: postgres.advertise: the address to advertise must look like http://HOST:PORT"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  tls: always\n", "config.yaml:4:8: postgres.tls: expected one of disable, prefer, require"),
        ("postgres:\n  host: b\n", "config.yaml:2:3: postgres.host: unknown key"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  advertise: 10.0.0.11:8080\n", "config.yaml:4:14: postgres.advertise: the address to advertise must look like http://HOST:PORT"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  advertise: https://web-1:8080\n", "config.yaml:4:14: postgres.advertise: the address to advertise must look like http://HOST:PORT"),
        ("storage: postgres\npostgres:\n  url: postgres://a@b/c\n  advertise: http://web-1:8080/api\n", "config.yaml:4:14: postgres.advertise: the address to advertise must look like http://HOST:PORT"),
        // A database's URL where a section or a kind was expected: the message says so, not what it holds.
        ("storage: postgres://a:hunter2@b/c\n", "config.yaml:1:10: storage: expected file or postgres, found another value (a database's URL goes under postgres.url)"),
        ("storage: postgres\npostgres: postgres://a:hunter2@b/c\n", "config.yaml:2:11: postgres: expected a mapping, found a single value (not shown: it may be a secret)"),
        ("tokens: hunter2\n", "config.yaml:1:9: tokens: expected a mapping from a token's name to the token, found a single value (not shown"),
        ("metrics: hunter2\n", "config.yaml:1:10: metrics: expected a mapping, found a single value (not shown"),
    ])
    func mistakes(text: String, message: String) {
        #expect {
            try parse(text)
        } throws: { error in
            "\(error)".hasPrefix(message) && !"\(error)".contains("hunter2")
        }
    }
}
