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

    @Test("its line names the client of a lone refusal as client.address, and of many as the latest one's, client.latest_address")
    func lineNamesTheLatestClient() {
        let one = RefusalReport.warning(count: 1, limit: 128, address: "10.0.0.7:5000")
        #expect(one.message.description.hasPrefix("refused a connection past http.max_connections (128) since the last such line"))
        #expect(one.metadata["client.address"]?.description == "10.0.0.7:5000" && one.metadata["client.latest_address"] == nil)
        let many = RefusalReport.warning(count: 10, limit: 128, address: "10.0.0.9:5001")
        #expect(many.message.description.hasPrefix("refused 10 connections past http.max_connections (128)"))
        #expect(many.metadata["client.latest_address"]?.description == "10.0.0.9:5001" && many.metadata["client.address"] == nil)
        #expect(many.metadata["http.max_connections"]?.description == "128")
    }
}
