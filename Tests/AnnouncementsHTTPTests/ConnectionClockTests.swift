import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// When a connection is closed, decided without sockets or time passing.
@Suite struct ConnectionClockTests {
    let limits = ConnectionLimits(idleTimeout: .seconds(60), readTimeout: .seconds(30), maxConnections: 10, shutdownGrace: .seconds(10))

    func at(_ seconds: Int64) -> NIODeadline { .uptimeNanoseconds(UInt64(1_000 + seconds) * 1_000_000_000) }

    @Test("an open connection that sends nothing expires at the idle timeout")
    func idle() {
        let clock = ConnectionClock(limits: limits, openedAt: at(0))
        #expect(clock.deadline == at(60))
        #expect(clock.expiry(at: at(59)) == nil)
        #expect(clock.expiry(at: at(60)) == .idle)
    }

    @Test("a request's read time runs from its first byte, however often bytes come")
    func read() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.bytesArrived(at: at(10))
        for second in 11...39 { clock.bytesArrived(at: at(Int64(second))) }
        #expect(clock.deadline == at(40))
        #expect(clock.expiry(at: at(40)) == .read)
        clock.requestBegan(at: at(12))
        clock.requestEnded(at: at(39))
        #expect(clock.expiry(at: at(40)) == nil, "the request arrived in time; its response is owed")
        #expect(clock.deadline == nil, "nothing limits a response in progress, an event stream's included")
        clock.responseEnded(at: at(100))
        #expect(clock.deadline == at(160), "idle again from the response's end")
    }

    @Test("a client that leaves its response unread expires after the idle timeout")
    func unread() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.requestEnded(at: at(1))
        clock.writabilityChanged(isWritable: false, sent: 100_000, at: at(5))
        clock.writabilityChanged(isWritable: false, sent: 100_000, at: at(30))
        #expect(clock.deadline == at(65))
        #expect(clock.expiry(at: at(65)) == .unread)
        let cut = clock.outputLooked(unsent: 90_000, sent: 100_000, at: at(65))
        #expect(!cut, "nothing more left in a whole period: cut")
        clock.writabilityChanged(isWritable: true, sent: 190_000, at: at(66))
        #expect(clock.deadline == nil)
    }

    @Test("a client that reads its response slowly is not cut as unread: the limit starts again each time more of the output has left, however much more was written meanwhile")
    func slowReader() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.requestEnded(at: at(1))
        clock.writabilityChanged(isWritable: false, sent: 0, at: at(5))
        #expect(clock.expiry(at: at(65)) == .unread)
        // (The stream wrote 8 MB more meanwhile: what waits grew, and a megabyte left.)
        let kept = clock.outputLooked(unsent: 8_000_000, sent: 1_000_000, at: at(65))
        #expect(kept, "it read a megabyte: kept")
        #expect(clock.expiry(at: at(65)) == nil && clock.deadline == at(125))
        let keptAgain = clock.outputLooked(unsent: 7_000_000, sent: 1_000_000, at: at(125))
        #expect(!keptAgain, "nothing read in a whole period: cut")
        #expect(clock.expiry(at: at(125)) == .unread)
        clock.writabilityChanged(isWritable: true, sent: 8_000_000, at: at(126))
        let keptWritable = clock.outputLooked(unsent: 0, sent: 8_000_000, at: at(127))
        #expect(!keptWritable, "nothing unread to look at")
    }

    @Test("a response whose end was handed over while its bytes still wait is not idle: watched as unread while the client reads, idle once they are sent; one never read is cut as unread")
    func endHandedOverBeforeSent() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.requestEnded(at: at(1))
        // Unwritable at the page's first 64 KB; then the rest of its 8 MB, and its end, handed over.
        clock.writabilityChanged(isWritable: false, sent: 0, at: at(2))
        clock.responseEnded(at: at(3))
        #expect(clock.deadline == at(62), "watched as unread, not idle from the end")
        #expect(clock.expiry(at: at(62)) == .unread)
        let kept = clock.outputLooked(unsent: 4_000_000, sent: 4_000_000, at: at(62))
        #expect(kept && clock.deadline == at(122), "4 MB left: kept")
        clock.writabilityChanged(isWritable: true, sent: 7_970_000, at: at(100))
        #expect(clock.deadline == at(160), "idle from when the rest went out")
        #expect(clock.expiry(at: at(160)) == .idle)
        let onItsWay = clock.outputLooked(unsent: 10_000, sent: 7_990_000, at: at(160))
        #expect(onItsWay && clock.deadline == at(220), "its last bytes still wait: watched, not cut")
        let sent = clock.outputLooked(unsent: 0, sent: 8_000_000, at: at(220))
        #expect(sent && clock.deadline == at(280), "all sent: idle from now")
        #expect(clock.expiry(at: at(280)) == .idle)
        let idle = clock.outputLooked(unsent: 0, sent: 8_000_000, at: at(280))
        #expect(!idle, "nothing waiting at the idle limit: idle, cut")

        // A small answer (the channel stays writable) that its client never reads.
        var small = ConnectionClock(limits: limits, openedAt: at(0))
        small.requestBegan(at: at(1))
        small.requestEnded(at: at(1))
        small.responseEnded(at: at(3))
        #expect(small.expiry(at: at(63)) == .idle)
        let watched = small.outputLooked(unsent: 50_000, sent: 0, at: at(63))
        #expect(watched && small.deadline == at(123))
        let cut = small.outputLooked(unsent: 50_000, sent: 0, at: at(123))
        #expect(!cut && small.expiry(at: at(123)) == .unread, "cut as unread, not idle")
    }

    @Test("a graceful stop bounds everything by the grace period, a response in progress too")
    func stopping() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.stopping(at: at(2))
        clock.stopping(at: at(5))
        #expect(clock.deadline == at(12))
        #expect(clock.expiry(at: at(12)) == .shutdown)
    }

    @Test("pipelined requests: idle only once every response has ended")
    func pipelined() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.requestEnded(at: at(1))
        clock.requestBegan(at: at(2))
        clock.requestEnded(at: at(2))
        clock.responseEnded(at: at(3))
        #expect(clock.deadline == nil)
        clock.responseEnded(at: at(4))
        #expect(clock.deadline == at(64))
    }
}
