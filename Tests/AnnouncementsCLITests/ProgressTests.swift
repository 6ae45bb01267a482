import Foundation
import Testing

/// Long offline work shows its progress on a terminal (stderr), and never in a pipe.
@Suite struct ProgressTests {
    /// A log (`large.jsonl`) of 3,000 hand-made lines (no chain) of about 1 KB each, unless told:
    /// past the 1 MiB from which these runs draw progress (`ANNOUNCEMENTS_PROGRESS_BYTES`; 64 MiB
    /// by default).
    @discardableResult
    func makeLargeLog(in folder: String, lines: Int = 3_000) throws -> String {
        let path = folder + "/large.jsonl"
        let body = String(repeating: "x", count: 1000)
        var text = ""
        text.reserveCapacity(lines * 1100)
        for seq in 1...lines {
            text += #"{"seq":\#(seq),"type":"created","id":\#(seq),"at":"2026-11-21T09:30:00.000Z","by":"a","data":{"title":"T\#(seq)","body":"\#(body)"}}"#
            text += "\n"
        }
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test(
        "replay, verify, export and backup draw their progress on a terminal's stderr, and not in a pipe",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux to give the command a terminal"),
        arguments: [
        ["replay", "--no-snapshot"], ["verify"], ["export", "--to", "copy.jsonl"], ["backup", "saved"],
        ]
    )
    func progress(arguments: [String]) async throws {
        let folder = try makeFolder(config: "log: large.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try makeLargeLog(in: folder)

        // In a pipe: no progress, not even a carriage return.
        let environment = ["ANNOUNCEMENTS_PROGRESS_BYTES": "\(1 << 20)"]
        let piped = try await CLI.run(arguments, in: folder, environment: environment, timeout: 300)
        #expect(!piped.stderr.contains("%") && !piped.stderr.contains("\r"), "\(piped.stderr)")
        try? FileManager.default.removeItem(atPath: folder + "/copy.jsonl")
        try? FileManager.default.removeItem(atPath: folder + "/saved")

        // On a terminal (script(1) gives the command one): percentages, then the line cleared.
        let command = ([CLI.binary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let terminal = try await CLI.run(["-qec", command, "/dev/null"], in: folder, environment: environment, timeout: 300, executable: "/usr/bin/script")
        #expect(terminal.stdout.contains("% (") && terminal.stdout.contains(" MiB)"), "\(terminal.stdout.prefix(500))")
        #expect(terminal.stdout.contains("\r\u{1B}[K"), "the progress line is cleared at the end")
    }

    @Test(
        "a read that fails part-way clears its progress line: the error is a line of its own",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) from util-linux to give the command a terminal")
    )
    func progressThenError() async throws {
        let folder = try makeFolder(config: "log: large.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 33 MB, read in pages of a few MiB: line 20,000 of 30,000, which is not JSON, comes after
        // progress was drawn.
        let path = try makeLargeLog(in: folder, lines: 30_000)
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        lines[19_999] = "{\"seq\":20000,"
        try lines.joined(separator: "\n").write(toFile: path, atomically: false, encoding: .utf8)
        let command = [CLI.binary.path, "replay", "--no-snapshot"].map { "'\($0)'" }.joined(separator: " ")
        let terminal = try await CLI.run(["-qc", command, "/dev/null"], in: folder, environment: ["ANNOUNCEMENTS_PROGRESS_BYTES": "\(1 << 20)"], timeout: 300, executable: "/usr/bin/script")
        #expect(terminal.stdout.contains("% ("), "\(terminal.stdout.prefix(300))")
        #expect(terminal.stdout.contains("\u{1B}[K\r\u{1B}[Kerror: large.jsonl:20000:"), "\(terminal.stdout.suffix(300).debugDescription)")
    }
}
