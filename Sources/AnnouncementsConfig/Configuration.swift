import AnnouncementsDomain

/// Everything `config.yaml` sets, with the defaults for what it leaves out.
public struct Configuration: Sendable, Hashable {
    /// The address the server listens on.
    public var host = "127.0.0.1"
    /// The port the server listens on; 0 picks a free one.
    public var port = 8080
    /// Where the log lives (`storage:`): the file at `logPath` (the default), or PostgreSQL.
    public var storage = Storage.file
    /// The log file's path, resolved against the config file's folder.
    public var logPath = "events/announcements.jsonl"
    /// Announcements appended, by `seed`, when a writer opens an empty log.
    public var seed: [AnnouncementDraft] = []
    /// The writers that may change announcements, each with its token (nil when disabled).
    public var writers: [Writer] = []
    /// The rules announcements must follow.
    public var rules = ValidationRules()
    /// Seconds between the heartbeat comments of an idle event stream (`feed_heartbeat_seconds`).
    public var feedHeartbeatSeconds = 15
    /// Connection limits and browser access (`http:`).
    public var http = HTTP()
    /// Snapshots of the state beside the log, for a fast start-up (`snapshot:`).
    public var snapshot = Snapshot()

    public init() {}

    /// A named writer and its bearer token.
    public struct Writer: Sendable, Hashable {
        /// The writer's name: the `by` of every event it makes.
        public var name: String
        /// The token, or nil when it is disabled (its environment variable is unset or empty).
        public var token: String?
        /// Where the token comes from: `env:NAME`, or `inline`.
        public var source: String

        public init(name: String, token: String?, source: String) {
            self.name = name
            self.token = token
            self.source = source
        }
    }

    /// The writers whose tokens are set.
    public var enabledWriters: [Writer] { writers.filter { $0.token != nil } }
}
