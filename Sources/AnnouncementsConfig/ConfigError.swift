/// A problem in a config file, naming the file, the line and column, and the key.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The config file's path.
    public var path: String
    /// Where in the file, when the problem has a place.
    public var line: Int?
    public var column: Int?
    /// The key path, like `seed[2].title`, when the problem is about one value.
    public var key: String?
    /// What is wrong.
    public var message: String
    /// The file could not be read at all (missing, a folder, not allowed): not a mistake in it.
    public var isUnreadable = false

    public init(path: String, line: Int? = nil, column: Int? = nil, key: String? = nil, message: String) {
        self.path = path
        self.line = line
        self.column = column
        self.key = key
        self.message = message
    }

    /// `config.yaml:4:10: seed[2].title: expected a string`.
    public var description: String {
        var place = path
        if let line { place += ":\(line)" }
        if let column { place += ":\(column)" }
        return "\(place): " + (key.map { "\($0): " } ?? "") + message
    }
}
