/// This release of the product: what `announcements --version` prints, and what a refusal to read
/// a newer log's line names.
public enum Release {
    /// Semantic versioning: the log format and the HTTP API are the public contract.
    public static let version = "1.41.0"
}
