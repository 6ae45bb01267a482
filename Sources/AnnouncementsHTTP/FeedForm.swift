import AnnouncementsDomain

/// What the event feed (`GET /events`, JSON and Server-Sent Events) sends of each event: the line
/// as stored to auditors and admins; to anyone else its public form (`Event.publicLine`), `seq`,
/// `type`, `id` and `at`, without text, writer or key.
enum FeedForm: Sendable, Hashable {
    case full, `public`

    /// The form for `caller` (nil: a request without a token).
    init(for caller: Access.Caller?) {
        self = caller?.role.may(.audit) == true ? .full : .public
    }

    /// `lines`, the stored events after `after`, in this form.
    func lines(_ lines: [ArraySlice<UInt8>], after: Int) throws(APIError) -> [ArraySlice<UInt8>] {
        guard self == .public else { return lines }
        var slices: [ArraySlice<UInt8>] = []
        slices.reserveCapacity(lines.count)
        for (offset, line) in lines.enumerated() {
            guard let slice = Event.publicLine(ofStored: line) else {
                throw APIError(.serviceUnavailable, "event \(after + offset + 1) cannot be read back from the log right now; lists and single announcements still work")
            }
            slices.append(slice[...])
        }
        return slices
    }
}
