/// One step in reading an older line as today's event: it turns the fields of a line written in
/// format `from` into the shape of format `from + 1`.
///
/// Every reader of the log (start-up and replay, `history`, `verify`, the feed, a PostgreSQL log)
/// parses lines through `EventParser`, which runs a line through every step from its format to
/// `Event.currentFormat`: an old line means the same thing everywhere, and lines are never
/// rewritten to be read (`Event.format` keeps the format a line was written in: its link in the
/// hash chain depends on it). How to add one: events/README.md, "Changing the format".
struct Upcaster: Sendable {
    /// The format it reads (what changed in the next is said where each step is made, below, and
    /// in events/README.md's table).
    let from: Int
    let upcast: @Sendable (inout EventFields) throws(LineProblem) -> Void

    /// Every step, from format 1 to `Event.currentFormat`, in order.
    static let registry: [Upcaster] = [formatTwo, formatThree]

    /// Runs `fields`, of a line in an older format, through every step to today's shape.
    static func upcast(_ fields: inout EventFields) throws(LineProblem) {
        for step in registry where step.from >= fields.format {
            try step.upcast(&fields)
        }
    }

    /// Format 2 added erasure: a `salt` beside each event's `data`, `sealed` in place of both once
    /// erased, and a link in the chain by the sealed form. A format-1 event has neither field; it is
    /// otherwise today's event.
    static let formatTwo = Upcaster(from: 1) { fields throws(LineProblem) in
        guard !fields.hasSalt, fields.sealed == nil else {
            throw LineProblem("fields `salt` and `sealed` belong to format 2 and later: this line has no `v`, so it is read as format 1")
        }
    }

    /// Format 3 renamed `key` to `idempotency_key`: beside `salt` and `sealed`, a bare `key` read
    /// as a secret, and the HTTP header it comes from is `Idempotency-Key`.
    static let formatThree = Upcaster(from: 2) { fields throws(LineProblem) in
        guard fields.idempotencyKey == nil else {
            let format = fields.format == 1 ? "no `v`: format 1" : "\"v\":\(fields.format)"
            throw LineProblem("field `idempotency_key` belongs to format 3 and later (this line has \(format)): up to format 2 it is `key`")
        }
        fields.idempotencyKey = fields.key
        fields.key = nil
    }
}
