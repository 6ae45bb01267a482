import AnnouncementsDomain
import AnnouncementsStore
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// `/health`'s body, kept by each thread for one log position and health.
@Suite struct HealthBodyTests {
    @Test("the body is made once per log position and health: the head is read only when either changed")
    func keptPerState() throws {
        let health = HealthBody()
        var reads = 0
        func body(_ state: StoreHealth, seq: Int, _ head: LogHead?) -> String {
            String(buffer: health.body(state, seq: seq) { reads += 1; return head })
        }
        #expect(body(.ok, seq: 0, nil) == #"{"status":"ok","seq":0,"head":null}"#)
        #expect(body(.ok, seq: 0, nil) == #"{"status":"ok","seq":0,"head":null}"#)
        #expect(reads == 1)
        let head = LogHead(seq: 1, hash: LineHash(link: Array(#"{"seq":1}"#.utf8)))
        #expect(body(.ok, seq: 1, head) == #"{"status":"ok","seq":1,"head":"\#(head)"}"#)
        #expect(reads == 2, "a write moved the log on")
        _ = body(.ok, seq: 1, head)
        #expect(reads == 2)
        let failing = body(.closed, seq: 1, head)
        #expect(failing.hasPrefix(#"{"status":"degraded","reason":"the store is closed"#))
        #expect(reads == 3, "the health changed")
        #expect(body(.ok, seq: 1, head).hasPrefix(#"{"status":"ok""#))
        #expect(reads == 4)
    }

    @Test("a body made from a head newer than the position asked for is kept for that head's position")
    func keptAtItsHead() {
        let health = HealthBody()
        var reads = 0
        let head = LogHead(seq: 5, hash: LineHash(link: Array(#"{"seq":5}"#.utf8)))
        // The reader took seq 4, then the head moved on to 5 before it read it.
        _ = health.body(.ok, seq: 4) { reads += 1; return head }
        _ = health.body(.ok, seq: 4) { reads += 1; return head }
        #expect(reads == 2, "not kept as seq 4's")
        _ = health.body(.ok, seq: 5) { reads += 1; return head }
        #expect(reads == 2, "kept as seq 5's")
    }
}
