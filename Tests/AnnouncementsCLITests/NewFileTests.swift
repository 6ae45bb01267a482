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
}
