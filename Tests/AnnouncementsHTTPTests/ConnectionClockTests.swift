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
        clock.writabilityChanged(isWritable: false, waiting: 100_000, at: at(5))
        clock.writabilityChanged(isWritable: false, waiting: 90_000, at: at(30))
        #expect(clock.deadline == at(65))
        #expect(clock.expiry(at: at(65)) == .unread)
        clock.writabilityChanged(isWritable: true, waiting: 0, at: at(64))
        #expect(clock.deadline == nil)
    }

    @Test("a client that reads its response slowly is not cut as unread: the limit starts again each time the output waiting has shrunk")
    func slowReader() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.requestBegan(at: at(1))
        clock.requestEnded(at: at(1))
        clock.writabilityChanged(isWritable: false, waiting: 8_000_000, at: at(5))
        #expect(clock.expiry(at: at(65)) == .unread)
        let kept = clock.outputWaiting(7_000_000, at: at(65))
        #expect(kept, "it read a megabyte: kept")
        #expect(clock.expiry(at: at(65)) == nil && clock.deadline == at(125))
        let keptAgain = clock.outputWaiting(7_000_000, at: at(125))
        #expect(!keptAgain, "nothing read in a whole period: cut")
        #expect(clock.expiry(at: at(125)) == .unread)
        clock.writabilityChanged(isWritable: true, waiting: 0, at: at(126))
        let keptWritable = clock.outputWaiting(0, at: at(127))
        #expect(!keptWritable, "nothing unread to look at")
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
