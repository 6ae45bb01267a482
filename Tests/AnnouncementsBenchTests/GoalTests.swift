import Testing
@testable import AnnouncementsBench

@Suite struct GoalTests {
    @Test("a ratio goal is met at its target and above, not below it, nor against an anchor of 0")
    func ratioVerdicts() {
        #expect(Goal.ratio(name: "g", measured: 85, anchor: 100, unit: "req/s", target: 0.85).isMet == true)
        #expect(Goal.ratio(name: "g", measured: 90, anchor: 100, unit: "req/s", target: 0.85).isMet == true)
        #expect(Goal.ratio(name: "g", measured: 84, anchor: 100, unit: "req/s", target: 0.85).isMet == false)
        #expect(Goal.ratio(name: "g", measured: 5, anchor: 0, unit: "req/s", target: 0.85).isMet == false)
        #expect(Goal.ratio(name: "g", measured: 30, anchor: 120, unit: "req/s", target: 0.5).ratio == 0.25)
    }

    @Test("a limit goal is met at its limit and below, not above it; a skipped goal has no verdict")
    func limitVerdicts() {
        #expect(Goal.most(name: "g", measured: 1, unit: "s", limit: 1).isMet == true)
        #expect(Goal.most(name: "g", measured: 0.4, unit: "s", limit: 1).isMet == true)
        #expect(Goal.most(name: "g", measured: 1.01, unit: "s", limit: 1).isMet == false)
        #expect(Goal.skipped(name: "g", reason: "no pgbench").isMet == nil)
    }

    @Test("the goals file has three kinds of line; comments and empty lines are skipped")
    func parses() throws {
        let text = "# goals\nratio\tGET /health\t52000\t60000\treq/s\t0.85\n\nmost\tstart-up\t0.8\ts\t1\nskip\tPostgreSQL\tpgbench is missing\n"
        #expect(try GoalFile.parse(text, path: "goals.tsv") == [
            .ratio(name: "GET /health", measured: 52000, anchor: 60000, unit: "req/s", target: 0.85),
            .most(name: "start-up", measured: 0.8, unit: "s", limit: 1),
            .skipped(name: "PostgreSQL", reason: "pgbench is missing"),
        ])
    }

    @Test("a bad line is an error naming the file, the line and what is wrong", arguments: [
        ("ratio\tg\t1\t2\treq/s", "goals.tsv:2: a 'ratio' goal has 6 tab-separated fields (ratio, name, measured, anchor, unit, target), this line has 5"),
        ("ratio\tg\tfast\t2\treq/s\t0.8", "goals.tsv:2: field 3 (measured) is not a number of 0 or more: 'fast'"),
        ("most\tg\t1\ts\t-1", "goals.tsv:2: field 5 (limit) is not a number of 0 or more: '-1'"),
        ("most\tg\tnan\ts\t1", "goals.tsv:2: field 3 (measured) is not a number of 0 or more: 'nan'"),
        ("skip\tg", "goals.tsv:2: a 'skip' goal has 3 tab-separated fields (skip, name, reason), this line has 2"),
        ("best\tg\t1", "goals.tsv:2: unknown kind of goal 'best': expected ratio, most or skip"),
    ])
    func badLine(line: String, message: String) {
        let error = #expect(throws: BenchError.self) { try GoalFile.parse("# goals\n" + line + "\n", path: "goals.tsv") }
        #expect(error?.description == message)
    }

    @Test("a goals file that cannot be read is an error naming it")
    func unreadable() {
        let error = #expect(throws: BenchError.self) { try GoalFile.read(path: "/no/such/goals.tsv") }
        #expect(error?.description.hasPrefix("/no/such/goals.tsv: cannot read the goals") == true)
    }
}
