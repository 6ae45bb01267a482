import Testing
@testable import AnnouncementsConfig

/// The `http:` section: connection limits and CORS origins.
@Suite struct HTTPSectionTests {
    func parse(_ text: String) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: [:])
    }

    @Test("without the section, the defaults protect a server on the open network")
    func defaults() throws {
        let http = try parse("").http
        #expect(http.idleTimeoutSeconds == 60)
        #expect(http.readTimeoutSeconds == 30)
        #expect(http.maxConnections == nil, "derived from the descriptor limit at start-up")
        #expect(http.shutdownGraceSeconds == 10)
        #expect(http.corsOrigins.isEmpty)
    }

    @Test("reads every key")
    func everyKey() throws {
        let http = try parse("""
            http:
              idle_timeout_seconds: 5
              read_timeout_seconds: 3
              max_connections: 200
              shutdown_grace_seconds: 0
              cors_origins: ["https://intranet.example.com", "http://localhost:3000", "*"]
            """).http
        #expect(http.idleTimeoutSeconds == 5)
        #expect(http.readTimeoutSeconds == 3)
        #expect(http.maxConnections == 200)
        #expect(http.shutdownGraceSeconds == 0)
        #expect(http.corsOrigins == ["https://intranet.example.com", "http://localhost:3000", "*"])
    }

    @Test("origins are kept as browsers send them: IPv6 in brackets, scheme and host lowercased, a default port dropped")
    func originsAsBrowsersSendThem() throws {
        let http = try parse("""
            http:
              cors_origins: ["http://[::1]:3000", "HTTPS://Intranet.Example.COM:443", "http://x:80", "http://x:8080", "http://[FE80::1]"]
            """).http
        #expect(http.corsOrigins == ["http://[::1]:3000", "https://intranet.example.com", "http://x", "http://x:8080", "http://[fe80::1]"])
    }

    @Test("names the line, column and key of every mistake", arguments: [
        ("http:\n  idle_timeout_seconds: 0\n", "config.yaml:2:25: http.idle_timeout_seconds: must be between 1 and 86400, not 0"),
        ("http:\n  read_timeout: 3\n", "config.yaml:2:3: http.read_timeout: unknown key"),
        ("http:\n  max_connections: lots\n", "config.yaml:2:20: http.max_connections: expected a whole number from 1 to 1000000, found \"lots\""),
        ("http:\n  cors_origins: [\"https://x.example/\"]\n", "config.yaml:2:18: http.cors_origins: \"https://x.example/\" is not an origin"),
        ("http:\n  cors_origins: [\"intranet\"]\n", "config.yaml:2:18: http.cors_origins: \"intranet\" is not an origin"),
        ("http:\n  cors_origins: [\"http://a]b[\"]\n", "config.yaml:2:18: http.cors_origins: \"http://a]b[\" is not an origin"),
        ("http:\n  cors_origins: [\"http://[::1\"]\n", "config.yaml:2:18: http.cors_origins: \"http://[::1\" is not an origin"),
        ("http:\n  cors_origins: [\"http://x:0\"]\n", "config.yaml:2:18: http.cors_origins: \"http://x:0\" is not an origin"),
        ("http: 5\n", "config.yaml:1:7: http: expected a mapping"),
    ])
    func mistakes(text: String, message: String) {
        #expect {
            try parse(text)
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }
}
