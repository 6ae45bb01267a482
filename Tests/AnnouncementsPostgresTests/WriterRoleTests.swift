import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsPostgres

/// The writer role's decisions, without a database: every transition of `WriterRole`.
struct WriterRoleTests {
    typealias Role = WriterRole<Int>

    static let start = ContinuousClock.now

    static func shared(end: Int64 = 0) -> Role {
        Role(isShared: true, durableEnd: end, writerPID: 10, stallLimit: .seconds(5), lockTimeout: .seconds(24))
    }

    static func at(_ seconds: Double) -> ContinuousClock.Instant {
        start + .milliseconds(Int(seconds * 1000))
    }

    @Test("a log alone holds the role from the start, never asks, and a failed append of unknown outcome makes it unusable")
    func alone() throws {
        var role = Role(isShared: false, durableEnd: 7, writerPID: 10, stallLimit: .seconds(5), lockTimeout: .seconds(24))
        #expect(role.holds)
        guard case .held = role.ask() else { Issue.record("a log alone never asks"); return }
        #expect(try role.mayAppend(at: 7, path: "p") == false)
        let unlocks = role.yield()
        #expect(!unlocks, "a log alone keeps the role")
        let afterFailure = role.appendFailed(refused: false)
        #expect(afterFailure == .none)
        #expect(role.isUnusable)
        #expect(throws: LogError.self) { try role.mayAppend(at: 7, path: "p") }
        #expect(role.writeBlock(at: Self.at(100)) == nil, "a log alone never waits for the role")
    }

    @Test("a shared log asks, waits in line, looks for a stalled holder once it has waited the stall limit (once a second), and holds the role once the request is answered")
    func askAndTake() throws {
        var role = Self.shared()
        #expect(!role.holds)
        #expect(throws: LogError.self) { try role.mayAppend(at: 0, path: "p") }
        guard case .send = role.ask() else { Issue.record("a free role is asked for"); return }
        role.asked(1, at: Self.at(0))
        guard case .wait(let request) = role.ask() else { Issue.record("a role asked for is waited for"); return }
        #expect(request == 1)
        let early = role.stillInLine(at: Self.at(0.2))
        #expect(early == .wait)
        let justBefore = role.stillInLine(at: Self.at(4.9))
        #expect(justBefore == .wait)
        let atLimit = role.stillInLine(at: Self.at(5.0))
        #expect(atLimit == .lookForStall)
        let halfSecondLater = role.stillInLine(at: Self.at(5.5))
        #expect(halfSecondLater == .wait, "one look a second")
        let secondLater = role.stillInLine(at: Self.at(6.0))
        #expect(secondLater == .lookForStall)
        role.took()
        #expect(role.holds && role.takings == 1)
        #expect(try role.mayAppend(at: 0, path: "p") == false)
        #expect(throws: LogError.self) { try role.mayAppend(at: 3, path: "p") }
        role.linesEnd(at: 40)
        #expect(try role.mayAppend(at: 40, path: "p") == false)
        #expect(role.durableEnd == 40)
    }

    @Test("writes that waited before the request was sent (sent to a holder that did not answer) count that wait toward the stall limit; the lock's timeout still counts from the request")
    func writesWaitedBefore() {
        var role = Self.shared()
        role.asked(1, at: Self.at(2), writesSince: Self.at(0))
        let beforeLimit = role.stillInLine(at: Self.at(4.9))
        #expect(beforeLimit == .wait)
        let atLimit = role.stillInLine(at: Self.at(5))
        #expect(atLimit == .lookForStall, "5 s after the writes came, 3 s after the request")
        let beforeTimeout = role.stillInLine(at: Self.at(31.9))
        #expect(beforeTimeout != .dropWriter, "the lock's timeout counts from the request, sent at 2")
        var later = Self.shared()
        later.asked(1, at: Self.at(2), writesSince: Self.at(3))
        let notYet = later.stillInLine(at: Self.at(6.9))
        #expect(notYet == .wait, "a since after the request counts from the request")
    }

    @Test("in line past the database's own lock timeout and a quarter more, the writer's connection is dropped")
    func silentDatabase() {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        let beforeTimeout = role.stillInLine(at: Self.at(29.9))
        #expect(beforeTimeout != .dropWriter)
        let afterTimeout = role.stillInLine(at: Self.at(30))
        #expect(afterTimeout == .dropWriter)
        var free = Self.shared()
        let outOfLine = free.stillInLine(at: Self.at(100))
        #expect(outOfLine == .wait, "out of line, nothing to drop")
    }

    @Test("a refused append gives the role up; one of unknown outcome drops the writer, which connects again at the next use")
    func appendFailures() throws {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        role.took()
        let afterRefusal = role.appendFailed(refused: true)
        #expect(afterRefusal == .yield)
        let unlocks = role.yield()
        #expect(unlocks, "held: unlock")
        let unlocksAgain = role.yield()
        #expect(!unlocksAgain, "given up already: nothing to unlock")
        role.asked(2, at: Self.at(1))
        role.took()
        let afterUnknown = role.appendFailed(refused: false)
        #expect(afterUnknown == .dropWriter)
        #expect(!role.holds && !role.isUnusable)
        let connects = role.reconnects()
        #expect(connects == (lost: true, midAppend: true), "connecting again cures the append's failure")
        let connectsAgain = role.reconnects()
        #expect(connectsAgain == (lost: false, midAppend: false), "once")
        role.reconnectFailed(midAppend: true)
        let retries = role.reconnects()
        #expect(retries == (lost: true, midAppend: true), "a failed reconnect is tried again, and still cures")
        role.connected(writerPID: 11)
        #expect(role.writerPID == 11)
        // Lost otherwise (a failed try for the role, a failed unlock, a session the server ended):
        // connecting again cures no failure of an append.
        role.asked(3, at: Self.at(2))
        role.takeFailed(LogError(.locked, path: "p", message: "held elsewhere"))
        let afterTake = role.reconnects()
        #expect(afterTake == (lost: true, midAppend: false))
        role.asked(4, at: Self.at(3))
        role.took()
        role.dropWriter()
        let afterDrop = role.reconnects()
        #expect(afterDrop == (lost: true, midAppend: false))
    }

    static let a = Role.Holder(pid: 101, name: "announcements writer pid=1 host=a")
    static let b = Role.Holder(pid: 102, name: "announcements writer pid=2 host=b")

    @Test("a failed take puts the process out of line, drops its writer's session (a wait ended as the lock was granted may have left it the lock), and says why writes cannot be made, until a look finds the role moved (another session, or none) or a take succeeds")
    func takeFailure() throws {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        role.takeFailed(LogError(.locked, path: "p", message: "held elsewhere"))
        guard case .send = role.ask() else { Issue.record("out of line: the next take asks again"); return }
        #expect(role.writerLost, "the next take connects again")
        #expect(role.writeBlock(at: Self.at(10))?.contains("held elsewhere") == true)
        // The first look after the failure sees who keeps the role; the same session later: still blocked.
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(10))
        #expect(role.writeBlock(at: Self.at(10))?.contains("held elsewhere") == true)
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(11))
        #expect(role.writeBlock(at: Self.at(11))?.contains("held elsewhere") == true)
        // Another session: the role moved.
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.b, end: 5, at: Self.at(12))
        #expect(role.writeBlock(at: Self.at(12)) == nil)
        // A failure, then a first look that finds nobody holding the role.
        role.asked(2, at: Self.at(13))
        role.takeFailed(LogError(.unavailable, path: "p", message: "gone"))
        #expect(role.writeBlock(at: Self.at(13))?.contains("gone") == true)
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: nil, end: 5, at: Self.at(14))
        #expect(role.writeBlock(at: Self.at(14)) == nil)
        // A failure, then a take that succeeds.
        role.asked(3, at: Self.at(15))
        role.takeFailed(LogError(.locked, path: "p", message: "held elsewhere"))
        role.asked(4, at: Self.at(16))
        role.took(at: Self.at(16.2))
        #expect(role.writeBlock(at: Self.at(16.5)) == nil, "a take that succeeds clears the failure")
    }

    @Test("looks at the table that fail for two seconds, or one left unanswered for five, say writes cannot be made (the node takes nothing in), until one succeeds")
    func failingLooks() {
        var role = Self.shared()
        role.lookFailed("connection refused", at: Self.at(10))
        #expect(role.writeBlock(at: Self.at(11)) == nil, "one failed look is a blip")
        role.lookFailed("connection refused", at: Self.at(11.5))
        let block = role.writeBlock(at: Self.at(12.5))
        #expect(block?.contains("has not been able to read the log's table for 2 s (connection refused)") == true, "\(block ?? "nil")")
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(13))
        #expect(role.writeBlock(at: Self.at(13)) == nil)
        // A look that hung until its timeout: the table has not been read since the last good look.
        role.lookFailed("timed out", at: Self.at(37))
        #expect(role.writeBlock(at: Self.at(37))?.contains("for 24 s (timed out)") == true)
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(40))
        // A look the database leaves unanswered (a host gone silent): blocked once it has waited
        // five seconds (it may wait behind a read of lines on its connection), not at its timeout.
        role.lookSent(at: Self.at(40.25))
        #expect(role.writeBlock(at: Self.at(45)) == nil, "a slow answer, or one behind a long read, is a blip")
        let unanswered = role.writeBlock(at: Self.at(45.5))
        #expect(unanswered?.contains("has not been able to read the log's table for 5 s (the database has not answered a look at it for 5 s)") == true, "\(unanswered ?? "nil")")
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(46))
        #expect(role.writeBlock(at: Self.at(46)) == nil, "answered: clear")
        role.lookSent(at: Self.at(46.25))
        role.lookFailed("timed out", at: Self.at(60))
        #expect(role.writeBlock(at: Self.at(60))?.contains("for 14 s (timed out)") == true, "a failure counts from the last good look")
        var alone = Role(isShared: false, durableEnd: 7, writerPID: 10, stallLimit: .seconds(5), lockTimeout: .seconds(24))
        alone.lookSent(at: Self.at(5))
        alone.lookFailed("connection refused", at: Self.at(10))
        #expect(alone.writeBlock(at: Self.at(20)) == nil, "a log alone is not blocked by its looks")
    }

    @Test("a failed take, while the same session keeps the role, no longer blocks writes once one sent on to that holder is committed")
    func failureClearedByHolderCommit() {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        role.takeFailed(LogError(.locked, path: "p", message: "held elsewhere"))
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 5, at: Self.at(1))
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: Self.a, end: 6, at: Self.at(2))
        #expect(role.writeBlock(at: Self.at(2))?.contains("held elsewhere") == true, "the holder kept the role: the looks alone do not clear it")
        role.writeCommittedByHolder()
        #expect(role.writeBlock(at: Self.at(3)) == nil)
    }

    @Test("writes count as blocked once the role's queue has stood still two seconds with someone in it (another session, as the looks saw it, or this process's own request), naming the holder")
    func blockedQueue() {
        var role = Self.shared()
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [20], holder: Self.a, end: 5, at: Self.at(0))
        #expect(role.writeBlock(at: Self.at(1.9)) == nil)
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [20, 21], holder: Self.a, end: 5, at: Self.at(1.0))
        let block = role.writeBlock(at: Self.at(2.5))
        #expect(block?.contains("2.5 s") == true && block?.contains("pid=1 host=a") == true, "\(block ?? "nil")")
        // The first waiter got the role: it moved.
        _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [21], holder: Role.Holder(pid: 20, name: "c"), end: 5, at: Self.at(2.6))
        #expect(role.writeBlock(at: Self.at(2.9)) == nil)
        // This process's own request counts from when it was sent.
        var asking = Self.shared()
        asking.asked(1, at: Self.at(0))
        #expect(asking.writeBlock(at: Self.at(1)) == nil)
        #expect(asking.writeBlock(at: Self.at(2))?.contains("2.0 s") == true)
        _ = asking.close()
        #expect(asking.writeBlock(at: Self.at(3)) == nil, "a closed log says nothing: the store says it is closed")
    }

    @Test("a queue that moves is not blocked, however long sessions stay in it: writes spread over nodes pass the role back and forth, with someone always in line")
    func movingQueue() {
        var role = Self.shared()
        // Four looks a second for five seconds; another node always waits, the table grows or the holder changes.
        for look in 0..<20 {
            let holder = look % 2 == 0 ? Self.a : Self.b
            _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [300], holder: holder, end: Int64(look), at: Self.at(Double(look) * 0.25))
            #expect(role.writeBlock(at: Self.at(Double(look) * 0.25 + 0.2)) == nil, "look \(look)")
        }
        // The same holder, appending, with someone waiting all along: the role does not move, but
        // writes are made.
        for look in 20..<40 {
            _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [300], holder: Self.a, end: Int64(look), at: Self.at(Double(look) * 0.25))
        }
        #expect(role.writeBlock(at: Self.at(10)) == nil)
        // Then it stops appending: blocked two seconds after the last growth.
        for look in 40..<52 {
            _ = role.looked(role.lookTicket, sessionHolds: false, waiting: [300], holder: Self.a, end: 39, at: Self.at(Double(look) * 0.25))
        }
        #expect(role.writeBlock(at: Self.at(11.7)) == nil)
        #expect(role.writeBlock(at: Self.at(11.8))?.contains("pid=1 host=a") == true)
    }

    @Test("a look finds the role lost only when the same session held it before and after, and the server says it does not")
    func lostSession() {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        role.took()
        let ticket = role.lookTicket
        let lostWhileHeld = role.looked(ticket, sessionHolds: true, waiting: [], holder: nil, end: 0, at: Self.at(1))
        #expect(!lostWhileHeld)
        #expect(role.holds)
        // Given up and taken again while the look ran: it may have seen the gap between.
        let unlocks = role.yield()
        #expect(unlocks)
        role.asked(2, at: Self.at(1))
        role.took()
        let lostAcrossTakings = role.looked(ticket, sessionHolds: false, waiting: [], holder: nil, end: 0, at: Self.at(2))
        #expect(!lostAcrossTakings)
        #expect(role.holds)
        // Held throughout by this process's account, not by the server's: lost.
        let lost = role.looked(role.lookTicket, sessionHolds: false, waiting: [], holder: nil, end: 0, at: Self.at(3))
        #expect(lost)
        #expect(!role.holds && role.writerLost)
        // A look that began before the role was taken says nothing of it.
        let free = role.lookTicket
        role.asked(3, at: Self.at(3))
        role.took()
        let lostBeforeTaken = role.looked(free, sessionHolds: false, waiting: [], holder: nil, end: 0, at: Self.at(4))
        #expect(!lostBeforeTaken)
        #expect(role.holds)
    }

    @Test("a holder asked for the role gives it up once it has held it its quantum, at once after; one that does not hold it has nothing to give up")
    func quantum() {
        var role = Self.shared()
        #expect(role.yieldDelay(at: Self.at(0)) == nil)
        role.asked(1, at: Self.at(0))
        #expect(role.yieldDelay(at: Self.at(0)) == nil, "in line is not holding")
        role.took(at: Self.at(1))
        #expect(role.yieldDelay(at: Self.at(1)) == Role.quantum)
        #expect(role.yieldDelay(at: Self.at(1) + Role.quantum / 2) == Role.quantum / 2)
        #expect(role.yieldDelay(at: Self.at(2)) == .zero)
    }

    @Test("closing: once, saying whether the role was held; appends are refused from then on")
    func close() {
        var role = Self.shared()
        role.asked(1, at: Self.at(0))
        role.took()
        let first = role.close()
        #expect(!first.wasClosed && first.held)
        let second = role.close()
        #expect(second.wasClosed)
        #expect(throws: LogError.self) { try role.mayAppend(at: 0, path: "p") }
    }
}
