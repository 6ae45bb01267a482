import CYaml

/// Turns YAML text into a `YAMLNode` tree with libyaml's event parser.
/// The only file that touches libyaml: every C object is freed with `defer`.
enum YAMLParser {
    /// A syntax error libyaml reported, at a 1-based line and column.
    struct SyntaxError: Error {
        var message: String
        var mark: YAMLMark
    }

    /// Parses one document; nil for an empty file. Throws for malformed YAML or several documents.
    static func parse(_ text: String) throws(SyntaxError) -> YAMLNode? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw SyntaxError(message: "cannot start the YAML parser (out of memory)", mark: YAMLMark(line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(SyntaxError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = TreeBuilder()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { throw syntaxError(parser) }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { break }
                try builder.handle(event)
            }
            return builder.document
        }
    }

    private static func syntaxError(_ parser: yaml_parser_t) -> SyntaxError {
        let problem = parser.problem.map { String(cString: $0) } ?? "malformed YAML"
        let context = parser.context.map { String(cString: $0) + ": " } ?? ""
        let mark = YAMLMark(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
        return SyntaxError(message: "malformed YAML: \(context)\(problem)", mark: mark)
    }

    /// Builds nodes from the event stream, with a stack of open collections.
    private struct TreeBuilder {
        private enum Open {
            case mapping([(key: YAMLNode, value: YAMLNode)], pendingKey: YAMLNode?, YAMLMark, anchor: String?)
            case sequence([YAMLNode], YAMLMark, anchor: String?)
        }

        private var stack: [Open] = []
        private var anchors: [String: YAMLNode] = [:]
        private var documents = 0
        private(set) var document: YAMLNode?

        mutating func handle(_ event: yaml_event_t) throws(SyntaxError) {
            let mark = YAMLMark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                guard documents == 1 else {
                    throw SyntaxError(message: "expected one YAML document, found a second one", mark: mark)
                }
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                let node = YAMLNode.scalar(text, isPlain: scalar.style == YAML_PLAIN_SCALAR_STYLE, mark)
                try add(node, anchor: scalar.anchor.map { String(cString: $0) })
            case YAML_ALIAS_EVENT:
                let name = event.data.alias.anchor.map { String(cString: $0) } ?? ""
                guard let node = anchors[name] else { throw SyntaxError(message: "unknown alias *\(name)", mark: mark) }
                try add(node, anchor: nil)
            case YAML_MAPPING_START_EVENT:
                stack.append(.mapping([], pendingKey: nil, mark, anchor: event.data.mapping_start.anchor.map { String(cString: $0) }))
            case YAML_SEQUENCE_START_EVENT:
                stack.append(.sequence([], mark, anchor: event.data.sequence_start.anchor.map { String(cString: $0) }))
            case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
                switch stack.popLast() {
                case .mapping(let pairs, _, let start, let anchor)?: try add(.mapping(pairs, start), anchor: anchor)
                case .sequence(let items, let start, let anchor)?: try add(.sequence(items, start), anchor: anchor)
                case nil: throw SyntaxError(message: "unbalanced YAML collection", mark: mark)
                }
            default:
                break
            }
        }

        private mutating func add(_ node: YAMLNode, anchor: String?) throws(SyntaxError) {
            if let anchor { anchors[anchor] = node }
            switch stack.popLast() {
            case nil:
                document = node
            case .sequence(var items, let mark, let anchor)?:
                items.append(node)
                stack.append(.sequence(items, mark, anchor: anchor))
            case .mapping(var pairs, let key?, let mark, let anchor)?:
                pairs.append((key, node))
                stack.append(.mapping(pairs, pendingKey: nil, mark, anchor: anchor))
            case .mapping(let pairs, nil, let mark, let anchor)?:
                stack.append(.mapping(pairs, pendingKey: node, mark, anchor: anchor))
            }
        }
    }
}
