import Testing
@testable import AnnouncementsHTTP

@Suite struct StreamSlotsTests {
    @Test("half of max_connections (at least one) streams; a place comes back when its slot is dropped")
    func slots() {
        #expect(StreamSlots(maxConnections: 1).maximum == 1)
        #expect(StreamSlots(maxConnections: 10_000).maximum == 5_000)
        let slots = StreamSlots(maxConnections: 4)
        var taken = [slots.take(), slots.take()]
        #expect(taken.allSatisfy { $0 != nil } && slots.take() == nil && slots.count == 2)
        taken.removeFirst()
        #expect(slots.count == 1)
        let again = slots.take()
        #expect(again != nil && slots.count == 2)
        withExtendedLifetime((taken, again)) {}
    }
}
