extension ReadModel {
    /// Applies what can be applied of an event that does not follow (for `verify`, which goes on
    /// after a problem): takes its seq, and its id for a `created`, so that later lines are checked
    /// against the sequence the log claims rather than failing one after another.
    mutating func force(_ event: Event) {
        seq = event.seq - 1
        if case .created = event.change, event.id > maxId { maxId = event.id - 1 }
        do throws(ApplyProblem) {
            try apply(event)
        } catch {
            seq = event.seq
            lastAt = event.at
        }
    }

    /// Steps over a line this version cannot read (an unknown event type or format) at `skipped`,
    /// about announcement `id`: the next line then follows it without a gap, and an id it may have
    /// created is not taken again. A seq that does not follow is left alone (the next line's gap
    /// then shows it).
    mutating func skip(_ skipped: Int, id: Int) {
        guard skipped == seq + 1 else { return }
        seq = skipped
        if id > maxId { maxId = id }
    }
}
