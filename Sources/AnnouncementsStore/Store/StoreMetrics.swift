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
        writeFailures = Counter(label: Self.writeFailuresLabel, factory: factory)
        snapshotFailures = Counter(label: Self.snapshotFailuresLabel, factory: factory)
        followFailures = Counter(label: Self.followFailuresLabel, factory: factory)
    }

    public static let appendedLabel = "announcements_appended_events_total"
    public static let linesPerSyncLabel = "announcements_sync_lines"
    public static let syncDurationLabel = "announcements_sync_duration_seconds"
    static let writeFailuresLabel = "announcements_write_failures_total"
    static let snapshotFailuresLabel = "announcements_snapshot_failures_total"
    static let followFailuresLabel = "announcements_follow_failures_total"

    /// What each metric counts and in what unit, by name: its `# HELP` in a Prometheus scrape.
    public static let help: [String: String] = [
        appendedLabel: "Events made durable in the log (written and synced).",
        linesPerSyncLabel: "Lines carried by each write and sync of the log (1 alone; more when writers share a sync).",
        syncDurationLabel: "Seconds each write and sync of the log took.",
        writeFailuresLabel: "Writes or syncs of the log that failed (a full disk, an I/O error); each failed every write of its batch.",
        snapshotFailuresLabel: "Snapshots that could not be written (the log is unaffected; start-up replays more of it).",
        followFailuresLabel: "Looks at the lines other nodes appended to a shared log that could not take them in.",
    ]
}

extension Timer {
    /// Records `duration` (a clock's difference) in nanoseconds.
    package func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
