/// The limits on a config file, so that no input can make reading it slow, huge or a crash.
public enum ConfigLimits {
    /// The deepest a list or mapping may nest, counting the top-level mapping as 1. A config needs 3
    /// (`seed`, an announcement, its fields); the limit keeps the tree too shallow to overflow a stack.
    public static let maxDepth = 64
}
