/// A problem found while reading YAML into a tree, at a 1-based line and column: malformed YAML,
/// or YAML past one of `ConfigLimits`.
struct YAMLError: Error {
    var message: String
    var mark: YAMLMark
}
