/// Builds a `YAMLNode` tree from the YAML parser's events.
struct YAMLTreeBuilder {
    /// A list or mapping whose end has not come yet. Its children go into arrays of its own,
    /// appended in place, so that building the tree takes time in proportion to its nodes.
    private struct OpenCollection {
        let isMapping: Bool
        let mark: YAMLMark
        let anchor: String?
        var items: [YAMLNode] = []
        var pairs: [(key: YAMLNode, value: YAMLNode)] = []
        var pendingKey: YAMLNode?
    }

    private var stack: [OpenCollection] = []
    private var anchors: [String: YAMLNode] = [:]
    private var documents = 0
    /// The document's root, once its last event has come.
    private(set) var document: YAMLNode?

    mutating func documentStart(at mark: YAMLMark) throws(YAMLError) {
        documents += 1
        guard documents == 1 else { throw YAMLError(message: "expected one YAML document, found a second one", mark: mark) }
    }

    mutating func scalar(_ text: String, isPlain: Bool, anchor: String?, at mark: YAMLMark) {
        add(.scalar(text, isPlain: isPlain, mark), anchor: anchor)
    }

    mutating func alias(_ name: String, at mark: YAMLMark) throws(YAMLError) {
        guard let target = anchors[name] else { throw YAMLError(message: "unknown alias *\(name)", mark: mark) }
        add(target, anchor: nil)
    }

    mutating func collectionStart(isMapping: Bool, anchor: String?, at mark: YAMLMark) {
        stack.append(OpenCollection(isMapping: isMapping, mark: mark, anchor: anchor))
    }

    mutating func collectionEnd(at mark: YAMLMark) throws(YAMLError) {
        guard let open = stack.popLast() else { throw YAMLError(message: "unbalanced YAML collection", mark: mark) }
        add(open.isMapping ? .mapping(open.pairs, open.mark) : .sequence(open.items, open.mark), anchor: open.anchor)
    }

    private mutating func add(_ node: YAMLNode, anchor: String?) {
        if let anchor { anchors[anchor] = node }
        guard !stack.isEmpty else {
            document = node
            return
        }
        let top = stack.count - 1
        if !stack[top].isMapping {
            stack[top].items.append(node)
        } else if let key = stack[top].pendingKey {
            stack[top].pairs.append((key, node))
            stack[top].pendingKey = nil
        } else {
            stack[top].pendingKey = node
        }
    }
}
