import Synchronization

/// A state under a lock, and one fact about it that is read without the lock: `flag`, set to
/// `fact(state)` under the lock by every change (`withLock`), so that a check made on every core
/// for every request (whether writes can succeed) loads one word no request writes, where taking
/// the lock would write the line that the writers' own locking writes.
final class FlaggedMutex<State>: Sendable {
    private let state: Mutex<State>
    private let fact: @Sendable (State) -> Bool
    private let isSet: Atomic<Bool>

    init(_ initial: consuming sending State, fact: @escaping @Sendable (State) -> Bool) {
        isSet = Atomic(fact(initial))
        self.fact = fact
        state = Mutex(initial)
    }

    /// `fact` of the state as the last change left it.
    var flag: Bool {
        isSet.load(ordering: .acquiring)
    }

    /// Runs `body` on the state, holding its lock, and sets `flag` to what it leaves.
    func withLock<Result, Thrown: Error>(_ body: (inout sending State) throws(Thrown) -> sending Result) throws(Thrown) -> sending Result {
        try state.withLock { state throws(Thrown) in
            defer {
                let now = fact(state)
                if isSet.load(ordering: .relaxed) != now { isSet.store(now, ordering: .releasing) }
            }
            return try body(&state)
        }
    }
}
