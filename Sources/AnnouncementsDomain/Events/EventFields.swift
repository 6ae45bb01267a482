/// An event's fields as one line holds them, read but not yet checked: what `EventParser` fills
/// from the line, what upcasters turn from an older format's shape into today's, and what
/// `event()` then checks and builds the `Event` from.
struct EventFields {
    var seq: Int?
    var id: Int?
    var type: EventType?
    var at: Timestamp?
    var by: String?
    /// `idempotency_key`: the writer's idempotency key, in today's shape.
    var idempotencyKey: String?
    /// `key`: the idempotency key's name up to format 2 (`Upcaster.registry` renames it).
    var key: String?
    var data: DataFields?
    var prev: LineHash?
    /// `v`: 1 when absent.
    var format = 1
    var hasSalt = false
    var sealed: LineHash?

    /// The fields of an event's `data` object.
    struct DataFields {
        var title: Field<String> = .absent
        var body: Field<JSONText> = .absent
        var reason: Field<String> = .absent

        enum Field<Text> {
            case absent, null, text(Text)
        }
    }

    /// The event, once every field is checked against today's shape (the line's format is kept:
    /// its link in the chain depends on it).
    func event() throws(LineProblem) -> Event {
        guard let seq else { throw LineProblem("missing field `seq`") }
        guard let type else { throw LineProblem("missing field `type`") }
        guard let id else { throw LineProblem("missing field `id`") }
        guard let at else { throw LineProblem("missing field `at`") }
        guard let by else { throw LineProblem("missing field `by`") }
        if key != nil {
            throw LineProblem("field `key` is named `idempotency_key` since format 3 (this line has \"v\":\(format)): up to format 2 it is `key`")
        }
        let change: Event.Change
        if let sealed {
            guard data == nil, !hasSalt else { throw LineProblem("a sealed event carries no `data` or `salt`: they were erased") }
            guard type == .created || type == .edited else { throw LineProblem("only created and edited events are sealed, not \(type.rawValue)") }
            change = .sealed(type, digest: sealed)
        } else {
            change = try self.change(type)
            if format >= Event.firstErasableFormat, data != nil, !hasSalt { throw LineProblem("an event with `data` in format \(format) needs a `salt`") }
            if data == nil, hasSalt { throw LineProblem("field `salt` belongs to an event with `data`") }
        }
        return Event(seq: seq, id: id, at: at, by: by, key: idempotencyKey, change: change, prev: prev, format: UInt8(format))
    }

    private func change(_ type: EventType) throws(LineProblem) -> Event.Change {
        switch type {
        case .erased:
            guard case .text(let reason)? = data?.reason else { throw LineProblem("an erased event needs `data` with a `reason`") }
            return .erased(reason: reason)
        case .created:
            guard let data else { throw LineProblem("a created event needs `data` with a `title`") }
            let title: String
            switch data.title {
            case .absent: throw LineProblem("missing field `data.title`")
            case .null: throw LineProblem("field `data.title`: expected a string")
            case .text(let text): title = text
            }
            if case .text(let body) = data.body { return .created(AnnouncementDraft(title: title, bodyText: body)) }
            return .created(AnnouncementDraft(title: title, bodyText: nil))
        case .edited:
            guard let data else { throw LineProblem("an edited event needs `data` with `title`, `body` or both") }
            var patch = AnnouncementPatch()
            switch data.title {
            case .absent: break
            case .null: throw LineProblem("field `data.title`: expected a string (a title cannot be cleared)")
            case .text(let title): patch.title = title
            }
            switch data.body {
            case .absent: break
            case .null: patch.body = .clear
            case .text(let body): patch.body = .set(body)
            }
            guard patch.title != nil || patch.body != nil else {
                throw LineProblem("an edited event must change `data.title`, `data.body` or both")
            }
            return .edited(patch)
        case .deleted:
            guard data == nil else { throw LineProblem("a deleted event carries no `data`") }
            return .deleted
        }
    }
}
