/// What to do about a log that lacks lines recorded beside it (its head, a snapshot's tag), in the
/// words of whoever refuses it: start-up, which does not serve it, or an import, which does not
/// fill it with a log that lacks them.
enum RecordRemedy: Sendable {
    case startUp
    /// An import of the log file `source` into the emptied log.
    case importing(from: String)

    /// How the refusal's reason begins: the import names what it was importing.
    func reason(_ detail: String) -> String {
        switch self {
        case .startUp: detail
        case .importing(let source): "importing \(source): \(detail)"
        }
    }

    /// The refusal and its remedies: a backup that holds `lines` (`check`: how to check one, if
    /// anything), or, giving up `loss`, `records` moved aside (`moves`, the commands).
    func text(holding lines: String, check: String = "", givingUp loss: String, moving records: String, _ moves: String) -> String {
        switch self {
        case .startUp:
            "the server does not start on it. Restore the log from a backup that holds \(lines)\(check); or, to serve this log as it is and give up \(loss), move \(records) out of the way first (\(moves))"
        case .importing(let source):
            "this import leaves it empty. Import a backup that holds \(lines)\(check); or, to start this log anew from \(source), move \(records) out of the way first (\(moves))"
        }
    }
}
