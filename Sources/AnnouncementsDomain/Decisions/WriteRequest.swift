/// One write as a writer asks for it, before it has a seq.
package struct WriteRequest: Sendable {
    package enum Action: Sendable {
        case create(AnnouncementDraft)
        case update(id: Int, AnnouncementPatch)
        case delete(id: Int)
        case erase(id: Int, reason: String)
    }

    package let action: Action
    /// The writer's name, the event's `by`.
    package let by: String
    /// Which announcements it may edit or delete: its writer's own, or any.
    package let scope: WriteScope
    /// When set, the write goes ahead only if the announcement is at this revision.
    package var expectedRevision: Int?
    /// When set with `expectedRevision`, the tag of that revision's line as the writer's ETag
    /// named it: the store refuses the write (as at another revision) unless its line at that seq
    /// has this tag, so that an ETag of another history (a log restored from an older backup gave
    /// that seq to another event) passes for nothing.
    package let expectedLine: LineTag?
    /// The writer's idempotency key: a repeat of a request with a key already in the log appends
    /// nothing and gets the first one's outcome.
    package let key: String?

    package init(action: Action, by: String, scope: WriteScope = .any, expectedRevision: Int? = nil, expectedLine: LineTag? = nil, key: String? = nil) {
        self.action = action
        self.by = by
        self.scope = scope
        self.expectedRevision = expectedRevision
        self.expectedLine = expectedLine
        self.key = key
    }

    /// The fields of the announcement as it was before an edit's event that a repeat of it is
    /// compared with (see `isRepeat(of:before:)`), as far as they were looked up.
    package struct PriorFields: Sendable {
        /// The title; nil when not looked up.
        package var title: String?
        /// The body (`.some(nil)`: it had none); nil when not looked up.
        package var body: JSONText??

        package init(title: String? = nil, body: JSONText?? = nil) {
            self.title = title
            self.body = body
        }

        /// Both fields of `announcement`.
        package init(_ announcement: Announcement) {
            self.init(title: announcement.title, body: .some(announcement.bodyText))
        }
    }

    /// What a comparison with `event` needs of the announcement as it was before it: for an edit
    /// of the same announcement, the fields this request sets that the event does not hold.
    package func priorFieldsNeeded(by event: Event) -> (title: Bool, body: Bool) {
        guard case .update(let id, let patch) = action, case .edited(let edited) = event.change, id == event.id, event.by == by else { return (false, false) }
        return (patch.title != nil && edited.title == nil, patch.body != nil && edited.body == nil)
    }

    /// Whether this request is a repeat of the one that made `event`: by the same writer, it asks
    /// for the same change. A create, a delete or an erasure is compared with its event, which
    /// holds all of it. An edit's event holds only the fields that changed, so an edit must set
    /// each field the event holds to the same value, byte for byte, and may set one it does not
    /// hold only to the value it had before the first request (`before`, looked up as
    /// `priorFieldsNeeded` says): a field set to the value it had counts as not set, in the first
    /// request and in the repeat. One rule wherever the key is looked up (the node that took the
    /// first request, another node, after a restart), since the log holds all it needs.
    package func isRepeat(of event: Event, before: PriorFields) -> Bool {
        // A key is its writer's: another writer's request with it is never a repeat.
        guard event.by == by else { return false }
        switch (action, event.change) {
        case (.create(let draft), .created(let created)):
            return Self.same(draft.title, created.title) && draft.bodyText == created.bodyText
        case (.update(let id, let patch), .edited(let edited)):
            guard id == event.id else { return false }
            if let title = edited.title {
                guard Self.same(patch.title, title) else { return false }
            } else if let title = patch.title {
                guard let prior = before.title, Self.same(title, prior) else { return false }
            }
            if let body = edited.body {
                return patch.body == body
            } else if let body = patch.body {
                guard let prior = before.body else { return false }
                return body.text == prior
            }
            return true
        case (.delete(let id), .deleted):
            return id == event.id
        case (.erase(let id, let reason), .erased(let erasedFor)):
            return id == event.id && Self.same(reason, erasedFor)
        default:
            return false
        }
    }

    /// Whether this request is the same action as the one that made `event`, by the same writer,
    /// on the same announcement, whatever its texts: what decides the answer to a repeat of a key
    /// whose announcement was erased (its texts are gone, and must not be compared).
    package func isSameAction(as event: Event) -> Bool {
        guard event.by == by else { return false }
        switch (action, event.type) {
        case (.create, .created): return true
        case (.update(let id, _), .edited), (.delete(let id), .deleted), (.erase(let id, _), .erased): return id == event.id
        default: return false
        }
    }

    /// Refuses the request for its own problems (a draft's or a patch's fields), first: they are
    /// the writer's to fix whatever the state, and say nothing of it.
    /// The writer's name and an erasure's reason are checked too, though people do not type them
    /// into requests (a token's name, an operator's): a line the log's reader refuses is never written.
    package func check(_ rules: ValidationRules) throws(StoreError) {
        var problems = switch action {
        case .create(let draft): rules.problems(draft)
        case .update(_, let patch): rules.problems(patch)
        case .delete: [FieldProblem]()
        case .erase(_, let reason): ValidationRules.problem(reason: reason).map { [FieldProblem(field: "reason", message: $0)] } ?? []
        }
        if let problem = ValidationRules.problem(writer: by) { problems.append(FieldProblem(field: "by", message: problem)) }
        guard problems.isEmpty else { throw .invalid(problems) }
    }

    static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): lhs.utf8.elementsEqual(rhs.utf8)
        default: false
        }
    }
}

extension ReadModel {
    /// The event a request makes, checked against this state; nil when it changes nothing.
    package func event(for request: WriteRequest, at time: Timestamp, rules: ValidationRules) throws(StoreError) -> Event? {
        let seq = self.seq + 1
        try request.check(rules)
        switch request.action {
        case .create(let draft):
            return Event(seq: seq, id: maxId + 1, at: time, by: request.by, key: request.key, change: .created(draft), format: Event.currentFormat)
        case .update(let id, let patch):
            guard let patch = try existing(id, for: request).changes(patch) else { return nil }
            return Event(seq: seq, id: id, at: time, by: request.by, key: request.key, change: .edited(patch), format: Event.currentFormat)
        case .delete(let id):
            _ = try existing(id, for: request)
            return Event(seq: seq, id: id, at: time, by: request.by, key: request.key, change: .deleted, format: Event.currentFormat)
        case .erase(let id, let reason):
            // Live or deleted: what was ever created may be erased, once.
            guard id >= 1, id <= maxId else { throw .notFound(id: id) }
            if let earlier = erased[id] { throw .erased(id: id, seq: earlier) }
            return Event(seq: seq, id: id, at: time, by: request.by, key: request.key, change: .erased(reason: reason), format: Event.currentFormat)
        }
    }

    /// The live announcement `request` changes, if its writer may change it and it is at the
    /// revision the request expects (in that order: a refusal says nothing of the revision).
    private func existing(_ id: Int, for request: WriteRequest) throws(StoreError) -> Announcement {
        guard let current = announcement(id: id) else { throw .notFound(id: id) }
        if request.scope == .own, !current.createdBy.utf8.elementsEqual(request.by.utf8) {
            throw .notOwn(id: id, createdBy: current.createdBy)
        }
        if let expectedRevision = request.expectedRevision, expectedRevision != current.revision {
            throw .revisionMismatch(id: id, expected: expectedRevision, current: current.revision)
        }
        return current
    }
}
