import Foundation
import Testing
@testable import AnnouncementsDomain

/// The log lines README.md, docs/*.md and events/README.md show are real output of this version
/// (made by `scripts/readme-examples.sh`, and README.md's tour by `scripts/tour.sh --show`): each
/// reads as an event of the current format, consecutive lines of one example are linked by the
/// chain as the store links them, and a public-form line is the public form of the full line beside
/// it. A hand-edited example, or one left from an older format, fails here.
@Suite struct ReadmeLogLineTests {
    /// One example block's log lines (a leading `data: ` of an event stream taken off).
    struct Block: CustomStringConvertible {
        var file: String
        var lines: [(number: Int, text: String)]
        var description: String { "\(file):\(lines.first?.number ?? 0)" }
    }

    /// The repository's folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The documents whose examples are checked, relative to the repository: README.md, every
    /// docs/*.md (by name) and events/README.md.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }
            .sorted()
            .map { "docs/" + $0 }
        return ["README.md"] + docs + ["events/README.md"]
    }

    static func blocks(of file: String) throws -> [Block] {
        let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
        var blocks: [Block] = [], current: Block?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                if let block = current, !block.lines.isEmpty { blocks.append(block) }
                current = current == nil ? Block(file: file, lines: []) : nil
                continue
            }
            let event = line.hasPrefix("data: ") ? line.dropFirst(6) : line[...]
            if current != nil, event.hasPrefix(#"{"seq":"#), event.contains(#""type":""#) {
                current?.lines.append((index + 1, String(event)))
            }
        }
        return blocks
    }

    static let all: [Block] = (try? documents().flatMap { try blocks(of: $0) }) ?? []

    @Test("the documents show log lines (the examples this checks are found)")
    func found() {
        #expect(Self.all.reduce(0) { $0 + $1.lines.count } >= 15, "\(Self.all)")
        for file in ["README.md", "docs/http-api.md", "events/README.md"] {
            #expect(Self.all.contains(where: { $0.file == file }), "no example log line found in \(file)")
        }
    }

    @Test("every example log line reads as an event of the current format, linked to the one before it", arguments: all)
    func example(block: Block) throws {
        var full: [Int: (text: String, event: Event)] = [:]
        for (number, text) in block.lines where text.contains("…") {
            // Cut short in the README: only its format can be checked.
            if text.contains(#""prev":"#) { #expect(text.contains(#""v":\#(Event.currentFormat),"#), "\(block.file):\(number)") }
        }
        let whole = block.lines.filter { !$0.text.contains("…") }
        for (number, text) in whole where text.contains(#""by":"#) {
            let event = try EventParser.parse(Array(text.utf8))
            #expect(event.format == Event.currentFormat, "\(block.file):\(number) is in format \(event.format)")
            if let before = full[event.seq - 1] {
                // An erased line shown through `jq -c` lost the padding its link counts.
                let paddingLost = if case .sealed = before.event.change { !before.text.hasSuffix(" }") } else { false }
                if !paddingLost {
                    #expect(event.prev == LineHash(link: Array(before.text.utf8)), "\(block.file):\(number) is not linked to the line before it")
                }
            }
            full[event.seq] = (text, event)
        }
        for (number, text) in whole where !text.contains(#""by":"#) {
            // The public form: the full line with its seq, if the example shows it, makes it.
            let seq = try #require(try Self.publicSeq(text))
            if let line = full[seq] {
                #expect(Event.publicLine(ofStored: Array(line.text.utf8)[...]).map { String(decoding: $0, as: UTF8.self) } == text, "\(block.file):\(number)")
            }
        }
    }

    /// The seq of a public-form line (`{"seq":…,"type":…,"id":…,"at":…}`), which has no other field.
    private static func publicSeq(_ line: String) throws -> Int? {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object.map { Set($0.keys) } == ["seq", "type", "id", "at"], "\(line)")
        return object?["seq"] as? Int
    }
}
