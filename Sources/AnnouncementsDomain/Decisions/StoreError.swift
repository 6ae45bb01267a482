/// Why a write was refused or failed. Nothing is appended to the log for any of these.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The announcement breaks a rule; each problem names its field.
    case invalid([FieldProblem])
    /// No live announcement has this id (it never existed, or it was deleted).
    case notFound(id: Int)
    /// The writer may change only the announcements it created, and another writer created this one.
    case notOwn(id: Int, createdBy: String)
    /// The writer expected another revision: someone changed the announcement meanwhile.
    case revisionMismatch(id: Int, expected: Int, current: Int)
    /// The idempotency key was already used, by the event with this seq, for a different request.
    case keyReused(key: String, seq: Int)
    /// The log could not be written; the store still serves its previous state.
    case log(LogError)
    /// The store has been closed and takes no more writes.
    case closed

    public var description: String {
        switch self {
        case .invalid(let problems): "invalid announcement: " + problems.map(\.description).joined(separator: "; ")
        case .notFound(let id): "announcement \(id) does not exist"
        case .notOwn(let id, let createdBy):
            "announcement \(id) was created by \(createdBy), and this writer may change only the announcements it created"
        case .revisionMismatch(let id, let expected, let current):
            "announcement \(id) is at revision \(current), not \(expected): it changed since it was read"
        case .keyReused(let key, let seq):
            "idempotency key \"\(key)\" was already used for a different request (event \(seq)): send a new key with a new write"
        case .log(let error): error.description
        case .closed: "the store is closed"
        }
    }
}
