import Testing
@testable import AnnouncementsConfig

/// What operators set: `log_level`, `log_format` and `metrics:`.
@Suite struct OperationsSectionTests {
    func parse(_ text: String, environment: [String: String] = [:]) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: environment)
    }

    @Test("by default: info, text lines, and /metrics served to anyone")
    func defaults() throws {
        let configuration = try parse("")
        #expect(configuration.logLevel == .info && configuration.logFormat == .text)
        #expect(configuration.metrics.isEnabled && configuration.metrics.token == nil)
    }

    @Test("reads every key; a metrics token is literal or env:NAME")
    func everyKey() throws {
        let configuration = try parse("log_level: debug\nlog_format: json\nmetrics:\n  token: env:SCRAPE\n", environment: ["SCRAPE": "s3cret"])
        #expect(configuration.logLevel == .debug && configuration.logFormat == .json)
        #expect(configuration.metrics.token == "s3cret")
        #expect(try parse("metrics:\n  enabled: false\n").metrics.isEnabled == false)
        #expect(try parse("metrics:\n  token: abc\n").metrics.token == "abc")
    }

    @Test("names the line, column and key of every mistake", arguments: [
        ("log_format: xml\n", "config.yaml:1:13: log_format: must be one of `text`, `json`, not \"xml\""),
        ("metrics:\n  token: env:UNSET\n", "config.yaml:2:10: metrics.token: env:UNSET is not set: set it, or remove `token` to serve /metrics to anyone"),
        ("metrics:\n  enabled: 1\n", "config.yaml:2:12: metrics.enabled: expected true or false"),
        ("metrics:\n  path: /m\n", "config.yaml:2:3: metrics.path: unknown key"),
        ("tokens:\n  alice: same\nmetrics:\n  token: same\n", "config.yaml:4:10: metrics.token: is the token of `tokens.alice`: a scraper needs a token of its own"),
    ])
    func mistakes(text: String, expected: String) throws {
        do {
            _ = try parse(text)
            Issue.record("parsed: \(text)")
        } catch {
            #expect("\(error)".hasPrefix(expected), "\(error)")
        }
    }
}
