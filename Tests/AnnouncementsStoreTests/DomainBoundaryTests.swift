import Foundation
import Testing

/// The domain module holds values and decisions only: what touches files, threads, clocks or the
/// network belongs to the store (or a log behind it), so that the same domain serves every backend.
@Suite struct DomainBoundaryTests {
    /// The modules the domain may import.
    static let allowed: Set<String> = ["Crypto"]

    @Test("the domain imports no file, thread, clock or network API")
    func importsNothingOfTheMachine() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/AnnouncementsDomain")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "the domain's sources were not found at \(root.path)")
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ")
                // `import X`, `@testable import X`, `import struct X.Y`, `#if canImport(X)`.
                // (An import statement's first word, or the one after an attribute: not the word
                // in a sentence.)
                if let position = words.firstIndex(of: "import"), position == 0 || (position == 1 && words[0].hasPrefix("@")), position + 1 < words.count {
                    let module = words[words.count - 1].split(separator: ".").first.map(String.init) ?? ""
                    #expect(Self.allowed.contains(module), "\(file):\(number + 1): the domain imports \(module)")
                }
                #expect(!line.contains("canImport("), "\(file):\(number + 1): the domain depends on the platform: \(line)")
            }
        }
    }
}
