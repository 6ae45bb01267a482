import ArgumentParser

/// An announcement's id as a command takes it: 1 or more, checked before any log or server is
/// asked (`show 0` is a usage error, as `history 0` is, not a server's 404).
enum AnnouncementID {
    static func check(_ id: Int?) throws(ValidationError) {
        if let id, id < 1 { throw ValidationError("an announcement's id is 1 or more; got \(id).") }
    }
}
