import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing

/// The log's folder is made when missing, with the folders it is in, as `mkdir -p` does.
@Suite struct LogFolderTests {
    @Test("a log in folders that do not exist yet is created with them")
    func nestedFolders() throws {
        let folder = TemporaryFolder()
        let path = folder.file("var/lib/announcements/events/log.jsonl")
        let log = try FileLog(path: path)
        log.close()
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder.file("var/lib/announcements/events"), isDirectory: &isFolder) && isFolder.boolValue)
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test("a folder that cannot be made is named, with the reason")
    func blockedFolder() throws {
        let folder = TemporaryFolder()
        // A file where a folder would go.
        #expect(FileManager.default.createFile(atPath: folder.file("var"), contents: Data()))
        let error = #expect(throws: LogError.self) { try FileLog(path: folder.file("var/lib/log.jsonl")) }
        #expect(error?.description.contains("\(folder.file("var")) is not a folder (a file, or a link to nothing, is in its place)") == true, "it names the file in the way: \(String(describing: error))")
        #expect(error?.kind == .uncreatable, "a log that cannot be made, not one that cannot be read")

        // A link to a folder that is gone.
        #expect(symlink(folder.file("gone"), folder.file("events")) == 0)
        let dangling = #expect(throws: LogError.self) { try FileLog(path: folder.file("events/sub/log.jsonl")) }
        #expect(dangling?.description.contains("\(folder.file("events")) is not a folder (a file, or a link to nothing, is in its place)") == true, "\(String(describing: dangling))")
    }
}
