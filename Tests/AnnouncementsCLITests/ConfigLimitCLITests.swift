import Foundation
import Testing

@Suite struct ConfigLimitCLITests {
    @Test("a config nested 40,000 deep exits 78 naming its line and column, without a crash", arguments: ["init", "verify"])
    func deepConfig(command: String) async throws {
        let folder = try makeFolder(config: "port: " + String(repeating: "[", count: 40_000) + String(repeating: "]", count: 40_000) + "\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run([command], in: folder, timeout: 60)
        #expect(result.status == 78)
        #expect(result.stderr == "error: config.yaml:1:70: lists and mappings nest more than 64 deep here "
            + "(a config needs 3: seed, an announcement, its fields): remove the extra nesting\n")
        #expect(!FileManager.default.fileExists(atPath: folder + "/events"), "nothing is written")
    }
}
