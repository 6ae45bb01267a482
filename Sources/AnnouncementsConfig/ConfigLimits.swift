/// The limits on a config file, so that no input can make reading it slow, huge or a crash.
public enum ConfigLimits {
    /// The largest config file read, in bytes (4 MiB): room for the seed's HTML bodies (thousands
    /// of announcements the size of the shipped ones, or three at the default `max_body_bytes`),
    /// yet parsed in milliseconds. More data belongs in the log, written through the API.
    public static let maxFileBytes = 4 << 20

    /// The deepest a list or mapping may nest, counting the top-level mapping as 1. A config needs 3
    /// (`seed`, an announcement, its fields); the limit keeps the tree too shallow to overflow a stack.
    public static let maxDepth = 64

    /// The most that aliases (`*name`) may repeat in all, in bytes (4 MiB): each alias counts the
    /// UTF-8 bytes of the text it repeats plus one per value. A config with aliases thus holds at
    /// most twice what one without them can, instead of a billion laughs.
    public static let maxAliasBytes = 4 << 20

    /// `4.2 MiB (4404019 bytes)`: a size in error messages.
    static func describe(bytes: Int) -> String {
        let mebibytes = bytes % (1 << 20) == 0
            ? "\(bytes >> 20)"
            : "\(bytes >> 20).\(((bytes % (1 << 20)) * 10) >> 20)"
        return "\(mebibytes) MiB (\(bytes) bytes)"
    }
}

extension ConfigError {
    /// The error for a config file past `ConfigLimits.maxFileBytes`; `bytes` is its size, when known.
    static func tooLarge(path: String, bytes: Int?) -> ConfigError {
        let limit = ConfigLimits.describe(bytes: ConfigLimits.maxFileBytes)
        let size = bytes.map { "is \(ConfigLimits.describe(bytes: $0)), past the limit of \(limit)" } ?? "holds more than the limit of \(limit)"
        return ConfigError(path: path, message: "the config file \(size) for a config file: "
            + "keep the seed to a few announcements and add the rest through the API or `announcements post`")
    }
}
