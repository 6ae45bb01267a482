import AnnouncementsDomain

/// A place in a YAML file: 1-based line and column.
public struct YAMLMark: Sendable, Hashable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// The place of the byte at `offset` of UTF-8 `bytes` (`TextPlace`).
    init(ofByte offset: Int, in bytes: some Collection<UInt8>) {
        let place = TextPlace(ofByte: offset, in: bytes)
        self.init(line: place.line, column: place.column)
    }
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

    /// What this node is, for error messages: a scalar by its own text, in quotes (cut short past
    /// 40 characters), saying so when the file quoted it; a collection by its kind.
    var kindDescription: String {
        switch self {
        case .scalar where isNull: "nothing (null)"
        case .scalar(let text, let isPlain, _):
            isPlain ? Self.quoted(text) : "the quoted text \(Self.quoted(text))"
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }

    /// `kindDescription` without a scalar's text, for a section that holds secrets (a token, a
    /// database's URL with its password), which no message may print.
    var secretKindDescription: String {
        guard case .scalar = self, !isNull else { return kindDescription }
        return "a single value (not shown: it may be a secret)"
    }

    private static func quoted(_ text: String) -> String {
        VisibleText.quoted(text.count > 40 ? text.prefix(40) + "…" : text)
    }
}
