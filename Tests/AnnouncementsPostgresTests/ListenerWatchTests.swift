import Testing
@testable import AnnouncementsPostgres

/// The listener's watch, without a database: when it pings, when it gives a listener up.
@Suite struct ListenerWatchTests {
    let start = ContinuousClock.now
    let second = Duration.seconds(1)
    /// Asks as far apart as these tests make them are not a stall, except in the stall's own tests.
    let noStall = Duration.seconds(60)

    @Test("nothing until an interval after the start; then a ping, and nothing while it is awaited within the interval")
    func pingsWhenDue() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start) == .none)
        #expect(watch.next(at: start + .milliseconds(999)) == .none)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        #expect(watch.next(at: start + .milliseconds(1500)) == .none)
        #expect(watch.next(at: start + .milliseconds(1999)) == .none)
    }

    @Test("a ping heard: the next goes an interval after it was heard, with a new token")
    func heard() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        watch.heard(token: 1, at: start + .milliseconds(1200))
        #expect(watch.next(at: start + .milliseconds(2100)) == .none, "not a reconnect: it was heard")
        #expect(watch.next(at: start + .milliseconds(2200)) == .ping(token: 2))
    }

    @Test("a ping not heard within the interval: the listener is closed once, and the next ping goes an interval later")
    func unheard() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        #expect(watch.next(at: start + .seconds(2)) == .reconnect)
        #expect(watch.next(at: start + .milliseconds(2500)) == .none)
        // Heard too late: that listener is already given up, and this changes nothing.
        watch.heard(token: 1, at: start + .milliseconds(2600))
        #expect(watch.next(at: start + .seconds(3)) == .ping(token: 2))
        #expect(watch.next(at: start + .seconds(4)) == .reconnect)
    }

    @Test("a ping is awaited from when it is sent, not from when it was asked for (its query may wait behind a long read)")
    func awaitedFromSending() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        watch.sent(token: 1, at: start + .milliseconds(1800))
        #expect(watch.next(at: start + .milliseconds(2700)) == .none)
        #expect(watch.next(at: start + .milliseconds(2800)) == .reconnect)
        // A sent report for a ping no longer awaited changes nothing.
        watch.sent(token: 1, at: start + .seconds(3))
        #expect(watch.next(at: start + .milliseconds(3700)) == .none)
        #expect(watch.next(at: start + .milliseconds(3800)) == .ping(token: 2))
    }

    @Test("a ping heard with another token (an older one, another's) changes nothing")
    func otherToken() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        watch.heard(token: 7, at: start + .milliseconds(1100))
        #expect(watch.next(at: start + .seconds(2)) == .reconnect)
    }

    @Test("a ping that could not be sent (the database unreachable) is not awaited: no reconnect, the next an interval later")
    func notSent() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        watch.notSent(token: 1, at: start + .milliseconds(1100))
        #expect(watch.next(at: start + .seconds(2)) == .none)
        #expect(watch.next(at: start + .milliseconds(2100)) == .ping(token: 2))
        // A failure reported for a ping no longer awaited changes nothing.
        watch.notSent(token: 1, at: start + .milliseconds(2200))
        #expect(watch.next(at: start + .milliseconds(3100)) == .reconnect)
    }

    @Test("a listener that connects again: a ping sent before cannot be heard and is not awaited; the next goes an interval later")
    func connected() {
        var watch = ListenerWatch(interval: second, stall: noStall, at: start)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        watch.connected(at: start + .milliseconds(1500))
        #expect(watch.next(at: start + .seconds(2)) == .none)
        #expect(watch.next(at: start + .milliseconds(2500)) == .ping(token: 2))
    }

    @Test("asks a stall apart while a ping is awaited (this process did not run): the ping gets a whole interval from then, once")
    func stalled() {
        var watch = ListenerWatch(interval: second, stall: .milliseconds(500), at: start)
        for step in 1...3 { #expect(watch.next(at: start + .milliseconds(250 * step)) == .none) }
        #expect(watch.next(at: start + second) == .ping(token: 1))
        #expect(watch.next(at: start + .milliseconds(1250)) == .none)
        // Stopped from 1.25 s to 3 s: the notice may wait unread; without the stall, a reconnect here.
        #expect(watch.next(at: start + .seconds(3)) == .none)
        #expect(watch.next(at: start + .milliseconds(3250)) == .none)
        #expect(watch.next(at: start + .milliseconds(3999)) == .none)
        // Still unheard an interval after the stall: given up.
        #expect(watch.next(at: start + .seconds(4)) == .reconnect)
    }

    @Test("a ping given more time by one stall is not given more by a second: the listener is given up")
    func stalledTwice() {
        var watch = ListenerWatch(interval: second, stall: .milliseconds(500), at: start)
        #expect(watch.next(at: start + .milliseconds(500)) == .none)
        #expect(watch.next(at: start + second) == .ping(token: 1), "asks a stall apart with nothing awaited change nothing")
        #expect(watch.next(at: start + .seconds(2)) == .none, "the first stall")
        #expect(watch.next(at: start + .seconds(3)) == .reconnect, "a second stall, an interval after the first")
        // A ping heard after a stall is heard as any other: the next goes an interval later.
        #expect(watch.next(at: start + .milliseconds(3250)) == .none)
        #expect(watch.next(at: start + .milliseconds(4000)) == .ping(token: 2))
        #expect(watch.next(at: start + .seconds(5)) == .none, "a stall")
        watch.heard(token: 2, at: start + .milliseconds(5100))
        #expect(watch.next(at: start + .milliseconds(6099)) == .none)
        #expect(watch.next(at: start + .milliseconds(6100)) == .ping(token: 3))
    }

    @Test("a ping whose send took long is awaited from its sending, and that wait is not a stall")
    func slowSendNotAStall() {
        var watch = ListenerWatch(interval: second, stall: .milliseconds(500), at: start)
        for step in 1...3 { #expect(watch.next(at: start + .milliseconds(250 * step)) == .none) }
        #expect(watch.next(at: start + second) == .ping(token: 1))
        // The driver sent it until 2.5 s: no asks meanwhile, but it ran.
        watch.sent(token: 1, at: start + .milliseconds(2500))
        for step in 11...13 { #expect(watch.next(at: start + .milliseconds(250 * step)) == .none) }
        #expect(watch.next(at: start + .milliseconds(3500)) == .reconnect, "unheard an interval after it was sent, with no stall to extend it")
    }

    @Test("asks exactly a stall apart are a stall")
    func stallBoundary() {
        var watch = ListenerWatch(interval: second, stall: .milliseconds(500), at: start)
        #expect(watch.next(at: start + .milliseconds(500)) == .none)
        #expect(watch.next(at: start + second) == .ping(token: 1))
        #expect(watch.next(at: start + .milliseconds(1499)) == .none)
        #expect(watch.next(at: start + .milliseconds(1999)) == .none, "a gap of 0.5 s: extended to 2.999 s")
        #expect(watch.next(at: start + .milliseconds(2400)) == .none)
        #expect(watch.next(at: start + .milliseconds(2999)) == .reconnect)
    }

    @Test("a ping's payload names its token and its node; only this node's pings are read back")
    func payloads() {
        let node = "ab12-4F1C"
        let payload = ListenerWatch.payload(token: 42, node: node)
        #expect(payload == "ping 42 ab12-4F1C")
        #expect(ListenerWatch.token(inPayload: payload, node: node) == 42)
        #expect(ListenerWatch.token(inPayload: payload, node: "cd34-0000") == nil, "another node's ping")
        for other in ["appended http://h:1 \(node)", "appended \(node)", "role \(node)", "ping x \(node)", "ping  42 \(node)", "ping 42 \(node) x"] {
            #expect(ListenerWatch.token(inPayload: other, node: node) == nil, "\(other)")
        }
    }
}
