import AnnouncementsDomain
import Foundation
import Testing
@testable import AnnouncementsCLI

/// The files `export` and `backup` write are found under their names only once they are whole.
@Suite struct NewFileTests {
    @Test("while it is written, a new file is only <name>.partial; finished, only <name>; after a failure, neither")
    func partialUntilFinished() async throws {
        let folder = try makeFolder(config: "")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/copy.jsonl"
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        let size = try await NewFile.create(path) { file throws(LogError) in
            try file.append(line: "{}".utf8)
            #expect(!exists(path) && exists(path + ".partial"), "a copy interrupted here would not pass for a finished one")
            return file.size
        }
        #expect(size == 3)
        #expect(exists(path) && !exists(path + ".partial"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n")

        let other = folder + "/failed.jsonl"
        await #expect(throws: CLIError.self) {
            try await NewFile.create(other) { file throws(LogError) in
                try file.append(line: "{}".utf8)
                throw LogError(.writeFailed, path: other, message: "the disk is full")
            }
        }
        #expect(!exists(other) && !exists(other + ".partial"), "no part of a failed copy is left")

        // An interrupted copy's leftover is named, not overwritten; an existing file is never replaced.
        #expect(FileManager.default.createFile(atPath: other + ".partial", contents: Data("{\"seq\":1".utf8)))
        let refused = await #expect(throws: CLIError.self) { try await NewFile.create(other) { _ throws(LogError) in } }
        #expect(refused?.message == "\(other).partial exists: a copy that was interrupted, or one under way; remove it once no other copy runs")
        let again = await #expect(throws: CLIError.self) { try await NewFile.create(path) { _ throws(LogError) in } }
        #expect(again?.message == "\(path) exists: this writes a new file; choose another name or remove it")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n")
    }

    @Test("an interrupt (SIGINT, SIGTERM) while export or backup writes removes what it wrote, says so and ends by the signal; a second try then goes through", arguments: [
        (["export", "--to", "out/copy.jsonl"], "out/copy.jsonl", SIGINT),
        (["backup", "saved"], "saved/large.jsonl", SIGTERM),
    ])
    func interrupted(arguments: [String], target: String, signal: Int32) async throws {
        let folder = try makeFolder(config: "log: large.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 55 MB: a copy (verified as it is made) that takes a good part of a second, so that it is
        // under way when the signal comes, a few milliseconds after its file appeared.
        try ProgressTests().makeLargeLog(in: folder, lines: 50_000)
        let process = try ChildProcess(CLI.binary.path, arguments, environment: ProcessInfo.processInfo.environment, directory: folder)
        let partial = folder + "/" + target + ".partial"
        // Watched, and signalled the moment the copy's file appears, from a thread of its own: a
        // busy machine's cooperative pool may not run a task again before the copy has ended.
        let signalled = try await offPool { () -> Bool in
            let deadline = Date().addingTimeInterval(120)
            while !FileManager.default.fileExists(atPath: partial) {
                guard process.isRunning, Date() < deadline else { return false }
                usleep(1_000)
            }
            process.signal(signal)
            return true
        }
        try #require(signalled, "the copy never began, or ended before it could be interrupted")
        try await offPool { process.waitUntilExit() }
        let stderr = String(decoding: readToEnd(try #require(process.error)), as: UTF8.self)
        // Ended by the signal, as without the cleanup (a shell says 130 or 143, and a script stops).
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal, "\(process.terminationStatus): \(stderr)")
        #expect(stderr.hasSuffix("note: interrupted; what it had not finished writing is removed\n"), "\(stderr)")
        #expect(!stderr.contains("error:"), "what failed because of the interrupt is not reported: \(stderr)")
        let made = folder + "/" + (target as NSString).deletingLastPathComponent
        if arguments[0] == "backup" {
            #expect(!FileManager.default.fileExists(atPath: made), "the backup's folder, which it made, goes too")
        } else {
            let left = try FileManager.default.contentsOfDirectory(atPath: made)
            #expect(left.isEmpty, "\(left)")
        }
        // A second try finds nothing in its way.
        let again = try await CLI.run(arguments, in: folder, timeout: 300)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/" + target))
    }
}
