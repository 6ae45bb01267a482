import AnnouncementsDomain

/// The reader's plumbing around events: lines are parsed on worker threads with their bodies left
/// in the line, and the thread that keeps the event copies the body in (see `LogReader`).
extension EventParser {
    /// Parses one line, leaving a body in the store's escaping in the line rather than copying it:
    /// the event holds an empty text in its place, and the result says where it is in `line`.
    static func parseDeferringBody(_ line: UnsafeRawBufferPointer) throws(LineProblem) -> (event: Event, body: Range<Int>?) {
        var scanner = JSONScanner(line, defersText: true)
        let event = try scanner.event()
        return (event, scanner.deferredText)
    }
}

extension Event {
    /// An event that stands for none: what a line that holds none keeps, and what an event
    /// moved out leaves behind.
    static let placeholder = Event(seq: 0, id: 0, at: Timestamp(millisecondsSince1970: 0), by: "", change: .deleted)

    /// Puts in the body of a created or edited event (where a parser deferred it).
    mutating func setBody(_ text: JSONText) {
        switch takeChange() {
        case .created(var draft):
            draft.bodyText = text
            change = .created(draft)
        case .edited(var patch):
            patch.body = .set(text)
            change = .edited(patch)
        case let other:
            change = other
        }
    }
}
