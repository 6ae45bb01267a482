import Testing
@testable import AnnouncementsStore

/// A state under a lock with one fact about it readable without the lock (`FlaggedMutex`).
@Suite struct FlaggedMutexTests {
    private struct Refused: Error {}

    @Test("the flag is the fact of the state every change leaves, a change that throws included")
    func flagFollowsChanges() {
        let failure = FlaggedMutex<String?>(nil) { $0 != nil }
        #expect(!failure.flag, "made from the initial state")
        failure.withLock { $0 = "the disk is full" }
        #expect(failure.flag)
        #expect(failure.withLock { $0 } == "the disk is full", "a read leaves it as it is")
        #expect(failure.flag)
        #expect(throws: Refused.self) {
            try failure.withLock { (state) throws(Refused) in
                state = nil
                throw Refused()
            }
        }
        #expect(!failure.flag, "set from what the throwing change left")
        #expect(FlaggedMutex(5) { $0 > 3 }.flag)
    }
}
