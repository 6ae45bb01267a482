import Foundation
import Testing
@testable import AnnouncementsConfig

/// A way of nesting lists and mappings, and where the collection at a given depth starts.
enum Nesting: String, CaseIterable, CustomTestStringConvertible {
    case flowList, flowMapping, blockMapping, blockList

    var testDescription: String { rawValue }

    /// YAML nesting `depth` collections of this style, the outermost at depth 1.
    func text(depth: Int) -> String {
        switch self {
        case .flowList: String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        case .flowMapping: String(repeating: "{a: ", count: depth) + "1" + String(repeating: "}", count: depth)
        case .blockMapping: (0..<depth).map { String(repeating: "  ", count: $0) + "a:" }.joined(separator: "\n") + " 1\n"
        case .blockList: String(repeating: "- ", count: depth) + "x\n"
        }
    }

    /// `line:column` where the collection at `depth` starts in `text(depth:)`.
    func place(ofDepth depth: Int) -> String {
        switch self {
        case .flowList: "1:\(depth)"
        case .flowMapping: "1:\(4 * (depth - 1) + 1)"
        case .blockMapping: "\(depth):\(2 * (depth - 1) + 1)"
        case .blockList: "1:\(2 * (depth - 1) + 1)"
        }
    }
}

@Suite struct ConfigLimitsTests {
    func parse(_ text: String) throws -> Configuration {
        try Configuration.parse(text, path: "config.yaml", environment: [:])
    }

    /// The description of the `ConfigError` that parsing `text` throws.
    func error(parsing text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return (error as? ConfigError)?.description ?? "\(error)"
        }
    }

    static let tooDeep = "lists and mappings nest more than 64 deep here (a config needs 3: seed, an announcement, its fields): remove the extra nesting"

    @Test("nesting 64 deep is read and 65 deep is refused at the 65th, in every style", arguments: Nesting.allCases)
    func nestingLimit(style: Nesting) throws {
        #expect(ConfigLimits.maxDepth == 64)
        #expect(try YAMLParser.parse(style.text(depth: 64)) != nil)
        #expect(error(parsing: style.text(depth: 65)) == "config.yaml:\(style.place(ofDepth: 65)): \(Self.tooDeep)")
    }

    @Test("40,000 nested brackets are an error at the 65th, in well under a second, not a crash")
    func bracketBomb() {
        let text = "port: " + String(repeating: "[", count: 40_000) + String(repeating: "]", count: 40_000)
        let clock = ContinuousClock()
        var description: String?
        let elapsed = clock.measure { description = error(parsing: text) }
        #expect(description == "config.yaml:1:70: \(Self.tooDeep)")
        #expect(elapsed < .seconds(10), "took \(elapsed)")
    }

    @Test("20,000 tokens are read in well under ten seconds (time that grows with their count, not its square), and a repeat among them is still found")
    func manyTokens() throws {
        let count = 20_000
        let text = "tokens:\n" + (0..<count).map { "  writer\($0): secret-token-\($0)\n" }.joined()
        let clock = ContinuousClock()
        var configuration: Configuration?
        let elapsed = try clock.measure { configuration = try parse(text) }
        #expect(configuration?.tokens.count == count)
        #expect(configuration?.tokens.last?.name == "writer\(count - 1)")
        // Each repeat is still found (a name, a secret), the last among thousands.
        #expect(error(parsing: text + "  writer7: another-token\n")?.hasSuffix("tokens.writer7: appears twice") == true)
        #expect(error(parsing: text + "  late: secret-token-7\n")?.hasSuffix("has the same token as `writer7`: each name needs its own") == true)
        // A scan of the list for each token took minutes here; the sets, a second or so in a debug build.
        #expect(elapsed < .seconds(10), "took \(elapsed)")
    }

    @Test("an alias cannot put a value deeper than the limit")
    func aliasDepth() {
        let text = "a: &a " + String(repeating: "[", count: 62) + String(repeating: "]", count: 62) + "\nb: [[[*a]]]\n"
        #expect(error(parsing: text) == "config.yaml:2:7: the alias *a nests lists and mappings 66 deep, past the limit of 64 "
            + "(a config needs 3: seed, an announcement, its fields): alias a shallower value, or write it out")
    }

    @Test("a billion laughs is an error at the alias that passes the limit")
    func billionLaughs() {
        var lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        for level in 1...9 {
            lines.append("a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 9).joined(separator: ", ") + "]")
        }
        #expect(error(parsing: lines.joined(separator: "\n")) == "config.yaml:7:10: the alias *a5 brings what aliases repeat to "
            + "4.4 MiB (4658365 bytes), counting each value's text bytes plus one, past the limit of 4 MiB (4194304 bytes): "
            + "repeat large values fewer times, or write them out")
    }

    @Test("one body aliased thousands of times is an error at the alias that passes the limit")
    func repeatedBody() throws {
        let body = "<p>" + String(repeating: "x", count: 100_000) + "</p>"
        let text = "seed:\n  - &body {title: T, body: \"\(body)\"}\n" + String(repeating: "  - *body\n", count: 2_000)
        let description = try #require(error(parsing: text))
        #expect(description.hasPrefix("config.yaml:44:5: the alias *body brings what aliases repeat to 4.0 MiB (4200924 bytes), counting"), "\(description)")
    }

    @Test("aliases may repeat up to the limit")
    func aliasesWithinLimit() throws {
        let body = "<p>" + String(repeating: "x", count: 1_000_000) + "</p>"
        let text = "seed:\n  - &body {title: T, body: \"\(body)\"}\n" + String(repeating: "  - *body\n", count: 4)
        let configuration = try parse(text)
        #expect(configuration.seed.count == 5)
        #expect(configuration.seed.allSatisfy { $0.body == body })
    }

    @Test("a config file past the size limit is refused before it is parsed, naming its size and the limit")
    func fileSize() throws {
        let folder = NSTemporaryDirectory() + "config-limits-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A comment fills the file, so only its size can make it an error.
        func write(bytes: Int) throws -> String {
            let path = folder + "/\(bytes).yaml"
            try ("#" + String(repeating: "x", count: bytes - 2) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let atLimit = try write(bytes: ConfigLimits.maxFileBytes)
        var defaults = Configuration()
        defaults.logPath = folder + "/" + defaults.logPath
        #expect(try Configuration.load(path: atLimit, environment: [:]) == defaults)
        let past = try write(bytes: ConfigLimits.maxFileBytes + 1)
        let advice = "for a config file: keep the seed to a few announcements and add the rest through the API or `announcements post`"
        #expect(throws: ConfigError(path: past, message: "the config file is 4.0 MiB (4194305 bytes), past the limit of 4 MiB (4194304 bytes) \(advice)")) {
            try Configuration.load(path: past, environment: [:])
        }
        #expect(throws: ConfigError(path: "/dev/zero", message: "the config file holds more than the limit of 4 MiB (4194304 bytes) \(advice)")) {
            try Configuration.load(path: "/dev/zero", environment: [:])
        }
        let text = "#" + String(repeating: "x", count: 5 << 20)
        #expect(throws: ConfigError(path: "config.yaml", message: "the config file is 5.0 MiB (5242881 bytes), past the limit of 4 MiB (4194304 bytes) \(advice)")) {
            try parse(text)
        }
    }
}
