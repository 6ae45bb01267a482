@testable import AnnouncementsHTTP
import Testing

/// Which forwarded writes go in which request to the holder, without a network.
struct ForwardBatcherTests {
    private func sent(_ action: ForwardBatcher<Int>.Action) -> [Int]? {
        if case .send(let batch) = action { return batch }
        return nil
    }

    @Test("a write goes at once while fewer than the most requests are out; those that come meanwhile wait and go together when one is answered")
    func waitsWhileRequestsAreOut() {
        var batcher = ForwardBatcher<Int>(maxInFlight: 2, maxItems: 32, maxBytes: 1000)
        #expect(sent(batcher.add(1, bytes: 10)) == [1])
        #expect(sent(batcher.add(2, bytes: 10)) == [2])
        #expect(batcher.inFlight == 2)
        for item in 3...6 { #expect(sent(batcher.add(item, bytes: 10)) == nil, "both requests are out: \(item) waits") }
        #expect(batcher.waiting.count == 4)
        #expect(sent(batcher.answered()) == [3, 4, 5, 6], "together, in the order they came")
        #expect(batcher.inFlight == 2 && batcher.waiting.isEmpty)
        #expect(sent(batcher.answered()) == nil, "nothing waits")
        #expect(sent(batcher.answered()) == nil)
        #expect(batcher.inFlight == 0)
        #expect(sent(batcher.add(7, bytes: 10)) == [7], "none out: at once again")
    }

    @Test("a request carries at most the most items, and bytes; a write larger than that goes alone; the rest go with the next answer")
    func limits() {
        var batcher = ForwardBatcher<Int>(maxInFlight: 1, maxItems: 3, maxBytes: 100)
        #expect(sent(batcher.add(0, bytes: 10)) == [0])
        for item in 1...5 { _ = batcher.add(item, bytes: 10) }
        #expect(sent(batcher.answered()) == [1, 2, 3], "three items at most")
        #expect(sent(batcher.answered()) == [4, 5])
        _ = batcher.add(6, bytes: 60)
        _ = batcher.add(7, bytes: 60)
        _ = batcher.add(8, bytes: 500)
        _ = batcher.add(9, bytes: 10)
        #expect(sent(batcher.answered()) == [6], "7 would make 120 bytes")
        #expect(sent(batcher.answered()) == [7])
        #expect(sent(batcher.answered()) == [8], "larger than a request may be: alone")
        #expect(sent(batcher.answered()) == [9])
        #expect(sent(batcher.answered()) == nil && batcher.inFlight == 0 && batcher.waiting.isEmpty)
    }

    @Test("limits below one are taken as one")
    func atLeastOne() {
        var batcher = ForwardBatcher<Int>(maxInFlight: 0, maxItems: 0, maxBytes: 0)
        #expect(sent(batcher.add(1, bytes: 10)) == [1])
        #expect(sent(batcher.add(2, bytes: 10)) == nil)
        #expect(sent(batcher.add(3, bytes: 10)) == nil)
        #expect(sent(batcher.answered()) == [2])
        #expect(sent(batcher.answered()) == [3])
    }
}
