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
        #expect(elapsed < .seconds(2), "took \(elapsed)")
    }

    @Test("an alias cannot put a value deeper than the limit")
    func aliasDepth() {
        let text = "a: &a " + String(repeating: "[", count: 62) + String(repeating: "]", count: 62) + "\nb: [[[*a]]]\n"
        #expect(error(parsing: text) == "config.yaml:2:7: the alias *a nests lists and mappings 66 deep, past the limit of 64 "
            + "(a config needs 3: seed, an announcement, its fields): alias a shallower value, or write it out")
    }
}
