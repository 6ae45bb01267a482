import AnnouncementsDomain

/// Whether a store keeps a snapshot beside its log, and how often it writes one.
///
/// With snapshots on, opening the store loads the snapshot (when it still matches the log) and
/// replays only the lines after it; the store writes a new one in the background once `everyEvents`
/// events or `everySeconds` seconds have passed since the last (checked as write batches finish),
/// and one when it closes. Off: the store neither reads nor writes snapshots.
public struct SnapshotPolicy: Sendable, Hashable {
    /// Whether the store reads and writes snapshots at all.
    public var isEnabled: Bool
    /// Events after which a new snapshot is due (or as many as the state held announcements at the
    /// last, where that is more: see `SnapshotSchedule`); nil: not by count.
    public var everyEvents: Int?
    /// Seconds after which a new snapshot is due (when events came meanwhile); nil: not by time.
    public var everySeconds: Int?
    /// Bytes the log's disk must keep free beside a new snapshot (for the log's own writes): a
    /// snapshot that would leave less is skipped with a warning, not written.
    public var keepFreeBytes: Int64

    public init(isEnabled: Bool = true, everyEvents: Int? = 100_000, everySeconds: Int? = 600, keepFreeBytes: Int64 = 64 << 20) {
        self.isEnabled = isEnabled
        self.everyEvents = everyEvents
        self.everySeconds = everySeconds
        self.keepFreeBytes = keepFreeBytes
    }

    /// No snapshots: every start-up replays the whole log.
    public static let off = SnapshotPolicy(isEnabled: false, everyEvents: nil, everySeconds: nil)
}
