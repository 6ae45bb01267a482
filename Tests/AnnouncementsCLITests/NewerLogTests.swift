import AnnouncementsDomain
import Foundation
import Testing

/// A log that a newer version wrote to: lines of an event type, or a format, this version does not
/// know. Start-up refuses with what to do; verify and history go on past them.
@Suite struct NewerLogTests {
    /// The store's log of `makeLog` (5 lines), then line 6 of an unknown type, line 7 an edit this
    /// version knows, and line 8 in a newer format; each linked to the line before.
    func makeNewerLog() async throws -> (folder: String, lines: [String]) {
        let (folder, log) = try await makeLog()
        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        func append(_ fields: String) {
            let prev = LineHash(link: Array(lines[lines.count - 1].utf8))
            lines.append("{\(fields),\"prev\":\"\(prev)\"}")
        }
        append(#""seq":6,"type":"archived","id":1,"at":"2026-12-01T00:00:00.000Z","by":"alice","data":{"folder":"2026"}"#)
        append(#""seq":7,"type":"edited","id":3,"at":"2026-12-01T00:00:01.000Z","by":"bob","data":{"title":"Parking lot"}"#)
        append(#""seq":8,"type":"edited","id":3,"at":"2026-12-01T00:00:02.000Z","by":"bob","data":{"title":{"en":"Parking"}},"v":4"#)
        try (lines.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        return (folder, lines)
    }

    @Test("an unknown event type or format is not damage: the parser says which, with the line's seq and id")
    func parserNamesTheUnknown() throws {
        let unknownType = #"{"seq":6,"type":"archived","id":1,"at":"2026-12-01T00:00:00.000Z","by":"alice","data":{"folder":"2026"}}"#
        #expect(throws: LineProblem.self) { try EventParser.parse(Array(unknownType.utf8)) }
        do {
            _ = try EventParser.parse(Array(unknownType.utf8))
        } catch {
            #expect(error.unknown?.seq == 6 && error.unknown?.id == 1 && error.unknown?.type == "archived")
            #expect(error.unknown?.newerFormat == nil)
            #expect(error.message == "event type \"archived\" is not known to this version (\(Release.version)), which knows created, edited, deleted, erased; upgrade")
        }
        // A newer format is named as such, even where its fields would be wrong in this one.
        let newerFormat = #"{"seq":8,"type":"edited","id":3,"at":"2026-12-01T00:00:02.000Z","by":"bob","data":{"title":{"en":"x"}},"v":4}"#
        do {
            _ = try EventParser.parse(Array(newerFormat.utf8))
            Issue.record("a format-4 line parsed")
        } catch {
            #expect(error.unknown?.newerFormat == 4)
            #expect(error.message.hasPrefix("format 4 (\"v\":4) is not known to this version (\(Release.version)), which reads formats 1 to 3; upgrade"))
        }
        // Damage stays damage: a known type with a bad field, and a line that is not JSON.
        for damaged in [#"{"seq":6,"type":"edited","id":1,"at":"2026-12-01T00:00:00.000Z","by":"a","data":{"title":7}}"#, #"{"seq":6,"type":"arch"#] {
            do {
                _ = try EventParser.parse(Array(damaged.utf8))
                Issue.record("parsed: \(damaged)")
            } catch {
                #expect(error.unknown == nil, "\(damaged)")
            }
        }
    }

    @Test("start-up and replay refuse a newer log with file:line, what is unknown and `upgrade`, exit 65")
    func startUpRefuses() async throws {
        let (folder, _) = try await makeNewerLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let expected = "error: events/announcements.jsonl:6: event type \"archived\" is not known to this version (\(Release.version)), which knows created, edited, deleted, erased; upgrade"
        let replay = try await CLI.run(["replay"], in: folder)
        #expect(replay.status == 65)
        #expect(replay.stderr.hasPrefix(expected), "\(replay.stderr)")
        let serve = try await CLI.run(["serve", "--port", "0"], in: folder, timeout: 60)
        #expect(serve.status == 65)
        #expect(serve.stderr.contains(expected), "\(serve.stderr)")
        #expect(!serve.stdout.contains("listening"))
    }

    @Test("verify reports each unknown line as unknown, and neither a gap nor a broken link on the line after it")
    func verifyGoesOn() async throws {
        let (folder, _) = try await makeNewerLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["verify"], in: folder)
        #expect(result.status == 1)
        let problems = result.stdout.split(separator: "\n").filter { $0.hasPrefix("events/announcements.jsonl:") && $0.dropFirst(27).first?.isNumber == true }
        #expect(problems.count == 2, "\(result.stdout)")
        #expect(problems.first?.hasPrefix("events/announcements.jsonl:6: event type \"archived\" is not known") == true)
        #expect(problems.last?.hasPrefix("events/announcements.jsonl:8: format 4 (\"v\":4) is not known") == true)
        #expect(result.stdout.contains("unknown lines:       2 (written by a newer version: upgrade)"))
        #expect(result.stdout.contains("events:              8"))
    }

    @Test("a line replaced by one of an unknown type is still a break in the chain, and one without seq or id is damage")
    func tamperingIsNotAnUpgrade() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        lines[2] = #"{"seq":3,"type":"zzz","id":1,"at":"2026-11-21T09:30:00.000Z","by":"mallory"}"#
        try (lines.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let replaced = try await CLI.run(["verify"], in: folder)
        #expect(replaced.status == 1)
        #expect(replaced.stdout.contains("events/announcements.jsonl:3: event type \"zzz\" is not known"))
        #expect(replaced.stdout.contains("events/announcements.jsonl:3: no `prev`, but the hash chain runs from line 2"), "\(replaced.stdout)")
        #expect(replaced.stdout.contains("events/announcements.jsonl:4: `prev` does not match the SHA-256 of line 3"), "\(replaced.stdout)")

        lines[2] = #"{"type":"zzz"}"#
        try (lines.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let bare = try await CLI.run(["verify"], in: folder)
        #expect(bare.stdout.contains(#"events/announcements.jsonl:3: unknown type "zzz" (expected created, edited, deleted or erased)"#), "\(bare.stdout)")
        #expect(!bare.stdout.contains("unknown lines"), "not counted as written by a newer version")
    }

    @Test("history shows an unknown line as written, and the known events around it")
    func historyShowsRaw() async throws {
        let (folder, lines) = try await makeNewerLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let table = try await CLI.run(["history", "1"], in: folder)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("edited   alice  1   title \"Welcome\" → \"Welcome aboard\""))
        #expect(table.stderr.contains("note: events/announcements.jsonl:6: event type \"archived\" is not known"))
        #expect(table.stderr.contains(#"as written: {"seq":6,"type":"archived","id":1,"#))

        let jsonl = try await CLI.run(["history", "--format", "jsonl"], in: folder)
        #expect(jsonl.status == 0, "\(jsonl.stderr)")
        #expect(jsonl.stdout == lines.joined(separator: "\n") + "\n", "every line as written, the unknown ones too")

        let other = try await CLI.run(["history", "3"], in: folder)
        #expect(other.stdout.contains("title \"Parking\" → \"Parking lot\""), "\(other.stdout)")
        #expect(other.stderr.contains(":8: format 4"))
        #expect(!other.stderr.contains(":6:"), "line 6 is about announcement 1")
    }
}
