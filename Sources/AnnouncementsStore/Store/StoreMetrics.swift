import CoreMetrics

/// What the store's writer reports through swift-metrics, once per sync (never per event): the
/// events it made durable, how many lines each sync carried and how long it took, and the writes
/// that failed; and the snapshots and looks at other nodes' lines that failed. The executable
/// chooses where they go (`MetricsSystem.bootstrap`); by default, nowhere.
public struct StoreMetrics: Sendable {
    /// Events appended durably (`announcements_appended_events_total`).
    let appended: Counter
    /// Lines per write and sync (`announcements_sync_lines`, a histogram).
    let linesPerSync: Recorder
    /// Each write and sync's duration (`announcements_sync_duration_seconds`, a histogram).
    let syncDuration: Timer
    /// Writes or syncs that failed (`announcements_write_failures_total`).
    let writeFailures: Counter
    /// Snapshots that could not be written (`announcements_snapshot_failures_total`).
    let snapshotFailures: Counter
    /// Looks for lines other nodes appended that could not take them in
    /// (`announcements_follow_failures_total`; a PostgreSQL log shared by several nodes).
    let followFailures: Counter

    /// The metrics, made by `factory` (the bootstrapped one unless given).
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        appended = Counter(label: Self.appendedLabel, factory: factory)
        linesPerSync = Recorder(label: Self.linesPerSyncLabel, factory: factory)
        syncDuration = Timer(label: Self.syncDurationLabel, factory: factory)
        writeFailures = Counter(label: "announcements_write_failures_total", factory: factory)
        snapshotFailures = Counter(label: "announcements_snapshot_failures_total", factory: factory)
        followFailures = Counter(label: "announcements_follow_failures_total", factory: factory)
    }

    public static let appendedLabel = "announcements_appended_events_total"
    public static let linesPerSyncLabel = "announcements_sync_lines"
    public static let syncDurationLabel = "announcements_sync_duration_seconds"
}

extension Timer {
    /// Records `duration` (a clock's difference) in nanoseconds.
    package func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
