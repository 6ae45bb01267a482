import NIOHTTP1
import Testing
@testable import AnnouncementsHTTP

/// What a connection owes its client, decided without sockets.
@Suite struct ConnectionExchangesTests {
    @Test("a response goes out in its request's version: 1.1 kept open as it is, 1.0 told keep-alive or close")
    func versions() {
        var exchanges = ConnectionExchanges()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 200, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(exchanges.responseEnd() == .keepOpen)

        exchanges.requestHead(version: .http1_0, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 200, hasLength: true) == .send(version: .http1_0, connection: "keep-alive"))
        #expect(exchanges.responseEnd() == .keepOpen)

        exchanges.requestHead(version: .http1_0, keepAlive: false, isHead: false)
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 200, hasLength: true) == .send(version: .http1_0, connection: "close"))
        #expect(exchanges.responseEnd() == .close)
    }

    @Test("an HTTP/1.0 response without a length (a stream) closes the connection, whatever the client asked; one without a body does not")
    func http10WithoutLength() {
        var exchanges = ConnectionExchanges()
        exchanges.requestHead(version: .http1_0, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 304, hasLength: false) == .send(version: .http1_0, connection: "keep-alive"))
        #expect(exchanges.responseEnd() == .keepOpen)
        exchanges.requestHead(version: .http1_0, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 200, hasLength: false) == .send(version: .http1_0, connection: "close"))
        #expect(exchanges.responseEnd() == .close)
    }

    @Test("100 Continue goes to an HTTP/1.1 request at once when nothing is owed before it; a pipelined one hears it when the responses before it have ended, unless its body came meanwhile")
    func continues() {
        var exchanges = ConnectionExchanges()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        #expect(exchanges.expectsContinue(version: .http1_1) == true)
        exchanges.requestEnd()
        _ = exchanges.responseHead(status: 200, hasLength: false)
        // A second request read while the first one's stream goes out: its 100 waits.
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        #expect(exchanges.expectsContinue(version: .http1_1) == false)
        #expect(exchanges.continueDue() == nil, "the stream has not ended")
        #expect(exchanges.responseEnd() == .keepOpen)
        #expect(exchanges.continueDue() == .http1_1, "the stream ended: its turn, its body still to come")
        #expect(exchanges.continueDue() == nil, "once")
        exchanges.requestEnd()
        #expect(exchanges.responseHead(status: 201, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(exchanges.responseEnd() == .keepOpen)
        // Behind another response, with its body sent before the client heard anything: no 100.
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        _ = exchanges.responseHead(status: 200, hasLength: true)
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        #expect(exchanges.expectsContinue(version: .http1_1) == false)
        exchanges.requestEnd()
        #expect(exchanges.responseEnd() == .keepOpen)
        #expect(exchanges.continueDue() == nil, "its body came already")
        _ = exchanges.responseHead(status: 201, hasLength: true)
        _ = exchanges.responseEnd()
        exchanges.requestHead(version: .http1_0, keepAlive: true, isHead: false)
        #expect(exchanges.expectsContinue(version: .http1_0) == false, "an HTTP/1.0 request's expectation is ignored (RFC 9110 10.1.1)")
    }

    @Test("a client that closes its side while a stream goes out has left; while a response with a length or none goes out, it may still read")
    func inputClosedDuringStream() {
        var exchanges = ConnectionExchanges()
        #expect(!exchanges.closesOnInputClosed())
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        #expect(!exchanges.closesOnInputClosed(), "a request being answered: its client may half-close and wait")
        _ = exchanges.responseHead(status: 200, hasLength: false)
        #expect(exchanges.closesOnInputClosed())
        _ = exchanges.responseEnd()
        #expect(!exchanges.closesOnInputClosed())
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: true)
        exchanges.requestEnd()
        _ = exchanges.responseHead(status: 200, hasLength: false)
        #expect(!exchanges.closesOnInputClosed(), "a HEAD's answer has no body")
        _ = exchanges.responseEnd()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        _ = exchanges.responseHead(status: 200, hasLength: true)
        #expect(!exchanges.closesOnInputClosed())
    }

    @Test("a parse failure with nothing owed is answered at once")
    func failureBetweenRequests() {
        var exchanges = ConnectionExchanges()
        #expect(exchanges.parserFailure() == .answerNow)
        #expect(exchanges.parserFailure() == .ignore, "a parser failing again changes nothing")
    }

    @Test("a parse failure in a request's body fails the request; its answer closes the connection, and the framework's own answer after it is dropped")
    func failureInBody() {
        var exchanges = ConnectionExchanges()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        #expect(exchanges.parserFailure() == .failRequest)
        #expect(exchanges.responseHead(status: 400, hasLength: true) == .send(version: .http1_1, connection: "close"))
        #expect(exchanges.responseEnd() == .close)
        #expect(exchanges.responseHead(status: 400, hasLength: true) == .drop)
        #expect(exchanges.responseEnd() == .drop)
    }

    @Test("bytes that are not HTTP after a whole request: it is answered, then the rejection, then the connection closes; a client that did not keep it open gets the answer only")
    func failureAfterRequest() {
        var kept = ConnectionExchanges()
        kept.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        kept.requestEnd()
        #expect(kept.parserFailure() == .answerAfterOwed)
        #expect(kept.responseHead(status: 200, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(kept.responseEnd() == .answerThenClose)

        var closing = ConnectionExchanges()
        closing.requestHead(version: .http1_0, keepAlive: false, isHead: false)
        closing.requestEnd()
        #expect(closing.parserFailure() == .answerAfterOwed)
        #expect(closing.responseHead(status: 411, hasLength: true) == .send(version: .http1_0, connection: "close"))
        #expect(closing.responseEnd() == .close)
    }

    @Test("pipelined, a parse failure in the second request's body: the first is answered on an open connection, the second's answer closes it")
    func pipelinedFailureInBody() {
        var exchanges = ConnectionExchanges()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        exchanges.requestEnd()
        exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
        #expect(exchanges.parserFailure() == .failRequest)
        #expect(exchanges.responseHead(status: 200, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(exchanges.responseEnd() == .keepOpen)
        #expect(exchanges.responseHead(status: 400, hasLength: true) == .send(version: .http1_1, connection: "close"))
        #expect(exchanges.responseEnd() == .close)
    }

    @Test("pipelined, bytes that are not HTTP after two whole requests: both are answered, then the rejection closes the connection")
    func pipelinedFailureAfterRequests() {
        var exchanges = ConnectionExchanges()
        for _ in 0..<2 {
            exchanges.requestHead(version: .http1_1, keepAlive: true, isHead: false)
            exchanges.requestEnd()
        }
        #expect(exchanges.parserFailure() == .answerAfterOwed)
        #expect(exchanges.responseHead(status: 200, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(exchanges.responseEnd() == .keepOpen)
        #expect(exchanges.responseHead(status: 201, hasLength: true) == .send(version: .http1_1, connection: nil))
        #expect(exchanges.responseEnd() == .answerThenClose)
    }
}
