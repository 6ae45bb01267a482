import AnnouncementsDomain
import Logging

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
    /// The bearer tokens, each with its name (the `by` of the events it makes) and role.
    public var tokens: [Token] = []
    /// Whether reading live announcements needs a token (`reads:`).
    public var reads = ReadAccess.public
    /// The rules announcements must follow.
    public var rules = ValidationRules()
    /// Seconds between the heartbeat comments of an idle event stream (`feed_heartbeat_seconds`).
    public var feedHeartbeatSeconds = 15
    /// Connection limits and browser access (`http:`).
    public var http = HTTP()
    /// Snapshots of the state beside the log, for a fast start-up (`snapshot:`).
    public var snapshot = Snapshot()
    /// The least severe log messages written (`log_level`).
    public var logLevel = Logger.Level.info
    /// Text or JSON log lines (`log_format`).
    public var logFormat = LogFormat.text
    /// `GET /metrics` (`metrics:`).
    public var metrics = Metrics()

    public init() {}

    /// A named bearer token and its role.
    public struct Token: Sendable, Hashable {
        /// The token's name: the `by` of every event it makes.
        public var name: String
        /// What it may do.
        public var role: Role
        /// The token, or nil when it is disabled (its environment variable is unset or empty).
        public var token: String?
        /// Where the token comes from: `env:NAME`, or `inline`.
        public var source: String

        /// The environment variable the token is read from (`NAME` of `env:NAME`); nil for an inline one.
        public var variable: Substring? {
            source.hasPrefix("env:") ? source.dropFirst("env:".count) : nil
        }

        public init(name: String, role: Role = .editor, token: String?, source: String) {
            self.name = name
            self.role = role
            self.token = token
            self.source = source
        }
    }

    /// The tokens that are set.
    public var enabledTokens: [Token] { tokens.filter { $0.token != nil } }
}

extension Configuration {
    /// The host and port of `host` when it is a name or an IPv4 address with a port written into it
    /// (`localhost:8080`), which no resolver takes; nil otherwise (an IPv6 address has several colons).
    public static func portWritten(in host: String) -> (host: Substring, port: Substring)? {
        guard let colon = host.lastIndex(of: ":"), host.filter({ $0 == ":" }).count == 1 else { return nil }
        let digits = host[host.index(after: colon)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return (host[..<colon], digits)
    }
}
