import Testing
@testable import AnnouncementsBench

@Suite struct GoalTableTests {
    @Test("the table gives each goal's figures, ratio, target and verdict, aligned, then counts them")
    func renders() {
        let table = GoalTable(goals: [
            .ratio(name: "GET /health / bare", measured: 52_000, anchor: 60_000, unit: "req/s", target: 0.85),
            .ratio(name: "POST, 1 connection / fdatasync", measured: 1_960, anchor: 7_000, unit: "/s", target: 0.8),
            .most(name: "start-up, cold", measured: 0.83, unit: "s", limit: 1),
            .skipped(name: "POST, 16 / PostgreSQL", reason: "pgbench is missing"),
        ]).render()
        #expect(table == """
            goal                                measured        anchor  ratio    target
            GET /health / bare              52,000 req/s  60,000 req/s   0.87    ≥ 0.85  met
            POST, 1 connection / fdatasync      1,960 /s      7,000 /s   0.28    ≥ 0.80  NOT met
            start-up, cold                        0.83 s             -      -  ≤ 1.00 s  met
            POST, 16 / PostgreSQL           skipped: pgbench is missing
            2 of 3 goals met, 1 skipped
            """)
    }

    @Test("figures of 100 and more are whole with thousands separators, smaller ones have two decimals")
    func figures() {
        #expect(GoalTable.figure(1_234_567.4, "events/s") == "1,234,567 events/s")
        #expect(GoalTable.figure(999, "") == "999")
        #expect(GoalTable.figure(100, "") == "100")
        #expect(GoalTable.figure(0.834, "s") == "0.83 s")
    }
}
