/// A place in a YAML file: 1-based line and column.
public struct YAMLMark: Sendable, Hashable {
    public var line: Int
    public var column: Int
}

/// A YAML document as a tree, each node remembering where it starts.
indirect enum YAMLNode: Sendable {
    case scalar(String, isPlain: Bool, YAMLMark)
    case mapping([(key: YAMLNode, value: YAMLNode)], YAMLMark)
    case sequence([YAMLNode], YAMLMark)

    var mark: YAMLMark {
        switch self {
        case .scalar(_, _, let mark), .mapping(_, let mark), .sequence(_, let mark): mark
        }
    }

    /// The same node, starting at `mark` (its children keep their places).
    func moved(to mark: YAMLMark) -> YAMLNode {
        switch self {
        case .scalar(let text, let isPlain, _): .scalar(text, isPlain: isPlain, mark)
        case .mapping(let pairs, _): .mapping(pairs, mark)
        case .sequence(let items, _): .sequence(items, mark)
        }
    }

    /// True for a plain `~`, `null`, `Null`, `NULL` or empty scalar: YAML's null.
    var isNull: Bool {
        guard case .scalar(let text, let isPlain, _) = self, isPlain else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// What kind of node this is, for error messages.
    var kindDescription: String {
        switch self {
        case .scalar where isNull: "null"
        case .scalar(_, let isPlain, _): isPlain ? "a scalar" : "a quoted string"
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }
}
