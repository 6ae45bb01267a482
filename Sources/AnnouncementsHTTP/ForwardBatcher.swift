/// Which of the writes a node sends on to the writer role's holder go together in which request:
/// a write goes at once while fewer than `maxInFlight` requests are out (one connection's write
/// waits for nothing); the writes that come while they are all out wait, and go together in the
/// next request once one is answered, at most `maxItems` and `maxBytes` a request (a write larger
/// than that goes alone). So the holder handles one request, and this node one exchange, for as
/// many writes as came during a round trip, and the writes arrive at the holder together, for its
/// commits to take in together.
///
/// A value whose transitions answer what to send; its driver (`WriteForwarder`) sends it, and
/// calls `answered()` when a request's answer (or its failure) is in.
struct ForwardBatcher<Item> {
    enum Action {
        case send([Item])
        case none
    }

    let maxInFlight: Int
    let maxItems: Int
    let maxBytes: Int
    /// The writes waiting for a request, oldest first, with their sizes.
    private(set) var waiting: [(item: Item, bytes: Int)] = []
    /// Requests sent and not yet answered.
    private(set) var inFlight = 0

    init(maxInFlight: Int, maxItems: Int, maxBytes: Int) {
        self.maxInFlight = max(1, maxInFlight)
        self.maxItems = max(1, maxItems)
        self.maxBytes = maxBytes
    }

    /// A write to send on, of `bytes` bytes.
    mutating func add(_ item: Item, bytes: Int) -> Action {
        waiting.append((item, bytes))
        return next()
    }

    /// A request's answer, or its failure, is in.
    mutating func answered() -> Action {
        precondition(inFlight > 0, "an answer to a request never sent")
        inFlight -= 1
        return next()
    }

    /// The next request, when one may go and writes wait.
    private mutating func next() -> Action {
        guard inFlight < maxInFlight, !waiting.isEmpty else { return .none }
        var count = 0
        var bytes = 0
        // The first always goes; those after it while they fit.
        while count < waiting.count, count < maxItems, count == 0 || bytes + waiting[count].bytes <= maxBytes {
            bytes += waiting[count].bytes
            count += 1
        }
        let batch = waiting.prefix(count).map(\.item)
        waiting.removeFirst(count)
        inFlight += 1
        return .send(batch)
    }
}
