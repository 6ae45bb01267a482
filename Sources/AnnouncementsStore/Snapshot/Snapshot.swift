import AnnouncementsDomain

/// The state a server rebuilds at start-up, as it was after one line of the log, kept in a file
/// beside the log so that the next start-up reads it and replays only the lines after that one.
///
/// A snapshot holds everything start-up would otherwise rebuild from the whole log: the read
/// models (every live announcement, and the title order), the event index (where each line is,
/// and each announcement's chain of events), and the idempotency keys. It is *tagged* with the
/// line it covers last: that line's seq, the SHA-256 of its bytes, and where it starts and ends in
/// the log. A snapshot is used only while the log still holds that line, at that place, with that
/// hash (and so, through the hash chain, every sealed line before it); the first line after it must
/// chain to it too. Anything else (no file, a log cut back or rewritten, a damaged file, a file of
/// another format version) makes start-up replay the whole log, with a warning naming the reason:
/// a snapshot can make start-up faster, never different. See `SnapshotFile` for the file format.
struct Snapshot: Sendable {
    /// The line the snapshot covers last.
    var tag: SnapshotTag
    /// The state after that line: `model`, `lastHash` (the tag's hash), `index` and `keys`.
    var state: Replay
}

/// The line a snapshot covers last, and where it is.
struct SnapshotTag: Sendable, Hashable {
    /// The line's seq: the number of lines the snapshot covers.
    var seq: Int
    /// The SHA-256 of the line's bytes, without its newline.
    var hash: LineHash
    /// The offset of the line's first byte.
    var lineStart: Int64
    /// The offset just past the line's newline: where the lines the snapshot does not cover start.
    var end: Int64

    /// The line's length without its newline.
    var lineLength: Int { Int(end - lineStart) - 1 }
}
