import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FileLog.importLines`: a log file's lines into an empty log file, through a copy beside it.
@Suite struct ImportTests {
    static let lines = [
        #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"One"}}"#,
        #"{"seq":2,"type":"created","id":2,"at":"2026-11-21T09:30:01Z","by":"a","data":{"title":"Two"}}"#,
    ]

    @Test("the copy is checked beside the log, then renamed over it: the log gets the source's bytes and keeps its permissions")
    func imports() throws {
        let folder = TemporaryFolder()
        let source = folder.file("source.jsonl"), path = folder.file("log.jsonl")
        try write(Self.lines, to: source)
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        let log = try FileLog(path: path)
        defer { log.close() }
        var checked: (bytes: Data?, mode: Int?)?
        let end = try log.importLines(of: source) { copy throws(LogError) in
            #expect(copy == path + ".importing")
            checked = (FileManager.default.contents(atPath: copy), (try? FileManager.default.attributesOfItem(atPath: copy))?[.posixPermissions] as? Int)
            #expect(FileManager.default.contents(atPath: path)?.isEmpty == true, "the log stays empty until the copy is checked")
        }
        let expected = FileManager.default.contents(atPath: source)
        #expect(checked?.bytes == expected && checked?.mode == 0o600)
        #expect(end == Int64(expected?.count ?? 0))
        #expect(FileManager.default.contents(atPath: path) == expected)
        #expect((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int == 0o600)
        #expect(!FileManager.default.fileExists(atPath: path + ".importing"))
    }

    @Test("an import whose copy fails its check leaves the log as it was (empty, or missing when the import made it) and nothing beside it; a non-empty log is refused")
    func failedOrRefused() throws {
        let folder = TemporaryFolder()
        let source = folder.file("source.jsonl"), path = folder.file("log.jsonl")
        try write(Self.lines, to: source)
        for existed in [false, true] {
            if existed { #expect(FileManager.default.createFile(atPath: path, contents: Data())) }
            do {
                let log = try FileLog(path: path)
                defer { log.close() }
                #expect(throws: LogError.self) {
                    try log.importLines(of: source) { _ throws(LogError) in throw LogError(.invalidLine, path: path, message: "does not verify") }
                }
            }
            #expect(existed ? FileManager.default.contents(atPath: path)?.isEmpty == true : !FileManager.default.fileExists(atPath: path), "existed: \(existed)")
            #expect(!FileManager.default.fileExists(atPath: path + ".importing"))
        }

        try write(Self.lines, to: path)
        let full = try FileLog(path: path)
        defer { full.close() }
        let error = #expect(throws: LogError.self) { try full.importLines(of: source) { _ throws(LogError) in } }
        #expect(error?.message.hasPrefix("the log is not empty") == true)
    }

    @Test("a log named through a symlink keeps its link: the imported lines go into the file it names")
    func symlinked() throws {
        let folder = TemporaryFolder()
        let source = folder.file("source.jsonl"), target = folder.file("data.jsonl"), link = folder.file("log.jsonl")
        try write(Self.lines, to: source)
        #expect(FileManager.default.createFile(atPath: target, contents: nil))
        #expect(symlink(target, link) == 0)
        let log = try FileLog(path: link)
        defer { log.close() }
        _ = try log.importLines(of: source) { _ throws(LogError) in }
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target, "still a link")
        #expect(FileManager.default.contents(atPath: target) == FileManager.default.contents(atPath: source))
    }

    @Test("what an import cut short left beside the log is removed when the log is next opened")
    func leftover() throws {
        let folder = TemporaryFolder()
        let path = folder.file("log.jsonl")
        try write([Self.lines[0]], to: path + ".importing")
        try FileLog(path: path).close()
        #expect(!FileManager.default.fileExists(atPath: path + ".importing"))
        // Beside the file a symlinked log names, where the import wrote it.
        let target = folder.file("data.jsonl"), link = folder.file("linked.jsonl")
        #expect(FileManager.default.createFile(atPath: target, contents: nil) && symlink(target, link) == 0)
        try write([Self.lines[0]], to: target + ".importing")
        try FileLog(path: link).close()
        #expect(!FileManager.default.fileExists(atPath: target + ".importing"))
    }
}
