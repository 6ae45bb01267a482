/// A problem found while reading YAML into a tree, at a 1-based line and column.
struct YAMLError: Error {
    var message: String
    var mark: YAMLMark
}
