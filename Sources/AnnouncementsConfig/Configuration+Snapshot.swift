import AnnouncementsDomain
import AnnouncementsStore

/// The `snapshot:` section of `config.yaml`: whether the server keeps a snapshot of its state beside
/// the log (so that start-up replays only the lines after it), and how often it writes one.
extension Configuration {
    /// Snapshots of the state (see `SnapshotPolicy`).
    public struct Snapshot: Sendable, Hashable {
        /// Whether the server reads and writes snapshots at all (`enabled`).
        public var isEnabled = true
        /// Events after which a new snapshot is written (`every_events`; 0: not by count).
        public var everyEvents = 100_000
        /// Seconds after which a new snapshot is written, when events came meanwhile
        /// (`every_seconds`; 0: not by time).
        public var everySeconds = 600
        /// MiB the log's disk must keep free beside a new snapshot, for the log's writes
        /// (`keep_free_mb`): a snapshot that would leave less is skipped.
        public var keepFreeMiB = 64

        public init() {}

        /// The store's policy for these settings.
        public var policy: SnapshotPolicy {
            guard isEnabled else { return .off }
            return SnapshotPolicy(
                isEnabled: true, everyEvents: everyEvents > 0 ? everyEvents : nil, everySeconds: everySeconds > 0 ? everySeconds : nil,
                keepFreeBytes: Int64(keepFreeMiB) << 20
            )
        }

        /// The keys the section may hold.
        static let keys = ["enabled", "every_events", "every_seconds", "keep_free_mb"]
    }
}

extension ConfigReader {
    /// The `snapshot:` section.
    func snapshot(_ node: YAMLNode) throws(ConfigError) -> Configuration.Snapshot {
        var snapshot = Configuration.Snapshot()
        if node.isNull { return snapshot }
        for (name, value) in try mapping(node, key: "snapshot", allowed: Configuration.Snapshot.keys) {
            let key = "snapshot.\(name)"
            switch name {
            case "enabled": snapshot.isEnabled = try boolean(value, key: key)
            case "every_events": snapshot.everyEvents = try integer(value, key: key, in: 0...1_000_000_000)
            case "every_seconds": snapshot.everySeconds = try integer(value, key: key, in: 0...31_536_000)
            case "keep_free_mb": snapshot.keepFreeMiB = try integer(value, key: key, in: 0...16_777_216)
            default: break
            }
        }
        return snapshot
    }

    /// A plain `true` or `false` (YAML's other spellings, like `yes` or `on`, are refused: they
    /// read as words in other YAML versions).
    func boolean(_ node: YAMLNode, key: String) throws(ConfigError) -> Bool {
        guard case .scalar(let text, true, _) = node, text == "true" || text == "false" else {
            if case .scalar(let text, true, _) = node, !node.isNull, text.count <= 40, !ValidationRules.hasControlCharacter(text) {
                throw error(node, key: key, "expected true or false, found `\(text)`")
            }
            throw error(node, key: key, "expected true or false, found \(node.kindDescription)")
        }
        return text == "true"
    }
}
