/// Why a write was refused or failed. Nothing is appended to the log for any of these.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The announcement breaks a rule; each problem names its field.
    case invalid([FieldProblem])
    /// No live announcement has this id (it never existed, or it was deleted).
    case notFound(id: Int)
    /// The writer may change only the announcements it created, and another writer created this one.
    case notOwn(id: Int, createdBy: String)
    /// The announcement's texts were erased, by the event with this seq: there is nothing left to
    /// change, erase or read of its past.
    case erased(id: Int, seq: Int)
    /// The announcement has events in format 1, whose link in the chain covers their text: they
    /// cannot be erased until the log is upgraded (`announcements upgrade`).
    case needsUpgrade(id: Int, lines: [Int])
    /// This store cannot do that (yet), on this log: the message says what can.
    case unsupported(String)
    /// The writer expected another revision: someone changed the announcement meanwhile.
    case revisionMismatch(id: Int, expected: Int, current: Int)
    /// The idempotency key was already used for a different request: by this writer's event with
    /// this seq, or (nil) by another writer, whose event is not this writer's to learn of.
    case keyReused(key: String, seq: Int?)
    /// The log could not be written; the store still serves its previous state.
    case log(LogError)
    /// The store has been closed and takes no more writes.
    case closed
    /// What was asked for is not ready yet (the search index being built): ask again shortly.
    case notReady(String)

    public var description: String {
        switch self {
        case .invalid(let problems): "invalid announcement: " + problems.map(\.description).joined(separator: "; ")
        case .notFound(let id): "announcement \(id) does not exist"
        case .notOwn(let id, let createdBy):
            "announcement \(id) was created by \(createdBy), and this writer may change only the announcements it created"
        case .erased(let id, let seq):
            "announcement \(id) was erased (event \(seq)): its texts are gone"
        case .needsUpgrade(let id, let lines):
            "announcement \(id) has events in the log's first format (lines \(lines.map(String.init).joined(separator: ", "))), whose place in the hash chain covers their text: stop the server and run `announcements upgrade` on the log, then erase"
        case .unsupported(let message): message
        case .revisionMismatch(let id, let expected, let current):
            "announcement \(id) is at revision \(current), not \(expected): it changed since it was read"
        case .keyReused(let key, let seq?):
            "idempotency key \"\(key)\" was already used for a different request (event \(seq)): send a new key with a new write"
        case .keyReused(let key, nil):
            "idempotency key \"\(key)\" was already used for a different request: send a new key with a new write"
        case .log(let error): error.description
        case .closed: "the store is closed"
        case .notReady(let message): message
        }
    }
}
