import Foundation
import Testing
@testable import AnnouncementsBench

@Suite struct DiskSyncTests {
    @Test("the loop writes whole batches of lines and syncs each, timing every sync, and removes its file")
    func writesAndSyncs() throws {
        let folder = NSTemporaryDirectory() + "disk-sync-test-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/sync.bin"
        let result = try DiskSync(path: path, linesPerSync: 3, lineBytes: 100).run(for: .milliseconds(20))
        #expect(result.latencies.count >= 1)
        #expect(result.lines == 3 * result.latencies.count)
        #expect(result.latencies == result.latencies.sorted())
        #expect(result.median > .zero)
        #expect(result.elapsed >= .milliseconds(20))
        #expect(abs(result.syncsPerSecond * 3 - result.linesPerSecond) < 1e-6)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a folder that does not exist is an error naming the file and the failed call")
    func missingFolder() throws {
        let path = NSTemporaryDirectory() + "no-such-folder-\(UUID().uuidString)/sync.bin"
        let error = #expect(throws: BenchError.self) { try DiskSync(path: path, linesPerSync: 1).run(for: .milliseconds(1)) }
        #expect(error?.description.hasPrefix(path + ": open failed: No such file or directory") == true)
    }
}
