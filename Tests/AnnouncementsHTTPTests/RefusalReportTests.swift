import Testing
@testable import AnnouncementsHTTP

/// When the connections refused past `max_connections` are logged, without a server or a clock.
@Suite struct RefusalReportTests {
    @Test("the first refusal is logged at once; then at most one line an interval, counting those refused since the line before")
    func onceAnInterval() {
        var report = RefusalReport(interval: .seconds(10))
        let start = ContinuousClock.now
        #expect(report.refused(at: start) == 1)
        for second in 1...9 { #expect(report.refused(at: start + .seconds(second)) == nil, "\(second) s") }
        #expect(report.refused(at: start + .seconds(10)) == 10, "the nine waiting and this one")
        #expect(report.refused(at: start + .seconds(12)) == nil)
        #expect(report.refused(at: start + .seconds(60)) == 2, "after a quiet while, the next one at once, with the one waiting")
    }
}
