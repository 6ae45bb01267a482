import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The writer of new files (copies, exports, backups, an upgraded log, side files): every byte
/// added, in order, across its large writes.
@Suite struct FileWriterTests {
    @Test("lines, bytes and what is encoded into the buffer reach the file in order, across several large writes")
    func writesInOrder() throws {
        let folder = TemporaryFolder()
        let path = folder.file("new.jsonl")
        let writer = try FileWriter(creating: path, exclusive: true, what: "the test file")
        var expected: [UInt8] = []
        // About 9 MB: more than two of the writer's large writes.
        for number in 0..<90_000 {
            let line = Array(#"{"seq":\#(number),"text":"\#(String(repeating: "x", count: number % 97))"}"#.utf8)
            switch number % 3 {
            case 0: try writer.append(line: line)
            case 1: try writer.add(line + [UInt8(ascii: "\n")])
            default:
                writer.buffer += line
                writer.buffer.append(UInt8(ascii: "\n"))
                try writer.added()
            }
            expected += line
            expected.append(UInt8(ascii: "\n"))
            #expect(writer.size == Int64(expected.count))
        }
        try writer.finish()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == expected)
    }

    @Test("a new file is private, exclusive creation refuses an existing one, and `like` gives it another file's permissions")
    func creation() throws {
        let folder = TemporaryFolder()
        let path = folder.file("new")
        _ = try FileWriter(creating: path, exclusive: true, what: "the test file")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let refused = #expect(throws: LogError.self) { try FileWriter(creating: path, exclusive: true, what: "the test file") }
        #expect(refused?.description.contains("cannot create the test file") == true, "\(String(describing: refused))")

        let model = folder.file("model")
        #expect(FileManager.default.createFile(atPath: model, contents: nil))
        #expect(chmod(model, 0o640) == 0)
        let copy = folder.file("copy")
        try FileWriter(creating: copy, exclusive: true, what: "the copy", like: model).finish()
        #expect(stat(copy, &status) == 0 && status.st_mode & 0o777 == 0o640)
    }
}
