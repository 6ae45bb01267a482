import Logging

/// What operators set: how the server logs (`log_level`, `log_format`) and whether it serves
/// `GET /metrics` (the `metrics:` section).
extension Configuration {
    /// How log lines are written (`log_format`): `text` for people, `json` (one object per line,
    /// stable keys) for a log pipeline.
    public enum LogFormat: String, Sendable, Hashable, CaseIterable {
        case text, json
    }

    /// The `metrics:` section.
    public struct Metrics: Sendable, Hashable {
        /// Whether `GET /metrics` is served (`enabled`, default true).
        public var isEnabled = true
        /// The bearer token a scraper must send (`token`: literal or `env:NAME`); nil: open.
        public var token: String?

        public init() {}

        static let keys = ["enabled", "token"]
    }
}

extension ConfigReader {
    /// The `metrics:` section.
    func metrics(_ node: YAMLNode, environment: [String: String]) throws(ConfigError) -> Configuration.Metrics {
        var metrics = Configuration.Metrics()
        if node.isNull { return metrics }
        for (name, value) in try mapping(node, key: "metrics", allowed: Configuration.Metrics.keys) {
            let key = "metrics.\(name)"
            switch name {
            case "enabled": metrics.isEnabled = try boolean(value, key: key)
            case "token":
                let (secret, source) = try secret(value, key: key, environment: environment)
                guard let secret else { throw error(value, key: key, "\(source) is not set: set it, or remove `token` to serve /metrics to anyone") }
                metrics.token = secret
            default: break
            }
        }
        return metrics
    }
}
