import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// What `GET /metrics` of a real server says of each metric.
@Suite struct MetricsHelpTests {
    @Test("every metric a scrape shows has a # HELP line saying what it counts (promtool check metrics refuses one without)")
    func everyMetricHasHelp() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        // A request first, so that the request metrics exist too.
        _ = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/announcements")!)
        let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/metrics")!)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let typed = Set(lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] })
        let helped = Dictionary(lines.filter { $0.hasPrefix("# HELP ") }.map { ($0.split(separator: " ")[2], $0.split(separator: " ").dropFirst(3).joined(separator: " ")) }) { first, _ in first }
        #expect(typed.count >= 16, "\(typed.sorted())")
        for name in typed.sorted() {
            #expect(helped[name].map { !$0.isEmpty } == true, "\(name) has no help text")
        }
    }
}
