/// Builds a `YAMLNode` tree from the YAML parser's events, refusing nesting deeper than
/// `ConfigLimits.maxDepth` and aliases that repeat more than `ConfigLimits.maxAliasBytes`.
struct YAMLTreeBuilder {
    /// A finished node, with what the limits measure of it.
    private struct Built {
        var node: YAMLNode
        /// UTF-8 bytes of text plus one per value, with every alias in it counted in full.
        var size: Int
        /// How many collections deep it goes, itself included: 0 for a scalar.
        var height: Int
    }

    /// A list or mapping whose end has not come yet. Its children go into arrays of its own,
    /// appended in place, so that building the tree takes time in proportion to its nodes.
    private struct OpenCollection {
        let isMapping: Bool
        let mark: YAMLMark
        let anchor: String?
        var items: [YAMLNode] = []
        var pairs: [(key: YAMLNode, value: YAMLNode)] = []
        var pendingKey: YAMLNode?
        var size = 1
        var height = 1
    }

    private var stack: [OpenCollection] = []
    private var anchors: [String: Built] = [:]
    /// What the aliases so far have repeated, measured as `Built.size`.
    private var repeatedBytes = 0
    private var documents = 0
    /// The document's root, once its last event has come.
    private(set) var document: YAMLNode?

    mutating func documentStart(at mark: YAMLMark) throws(YAMLError) {
        documents += 1
        guard documents == 1 else { throw YAMLError(message: "expected one YAML document, found a second one", mark: mark) }
    }

    mutating func scalar(_ text: String, isPlain: Bool, anchor: String?, at mark: YAMLMark) {
        add(Built(node: .scalar(text, isPlain: isPlain, mark), size: text.utf8.count + 1, height: 0), anchor: anchor)
    }

    mutating func alias(_ name: String, at mark: YAMLMark) throws(YAMLError) {
        guard let target = anchors[name] else {
            // (The name is not quoted: a token or a password may start with `*`.)
            throw YAMLError(message: "a YAML alias (a value that starts with `*`) names no anchor before it: write the value in quotes if it is text", mark: mark)
        }
        let depth = stack.count + target.height
        guard depth <= ConfigLimits.maxDepth else {
            throw YAMLError(message: "the alias *\(name) nests lists and mappings \(depth) deep, past the limit of \(ConfigLimits.maxDepth) "
                + "(a config needs 3: seed, an announcement, its fields): alias a shallower value, or write it out", mark: mark)
        }
        repeatedBytes += target.size
        guard repeatedBytes <= ConfigLimits.maxAliasBytes else {
            throw YAMLError(message: "the alias *\(name) brings what aliases repeat to \(ConfigLimits.describe(bytes: repeatedBytes)), "
                + "counting each value's text bytes plus one, past the limit of \(ConfigLimits.describe(bytes: ConfigLimits.maxAliasBytes)): "
                + "repeat large values fewer times, or write them out", mark: mark)
        }
        // The copy stands where the alias is: errors about it name the alias's place, not the anchor's.
        var copy = target
        copy.node = copy.node.moved(to: mark)
        add(copy, anchor: nil)
    }

    mutating func collectionStart(isMapping: Bool, anchor: String?, at mark: YAMLMark) throws(YAMLError) {
        guard stack.count < ConfigLimits.maxDepth else {
            throw YAMLError(message: "lists and mappings nest more than \(ConfigLimits.maxDepth) deep here "
                + "(a config needs 3: seed, an announcement, its fields): remove the extra nesting", mark: mark)
        }
        stack.append(OpenCollection(isMapping: isMapping, mark: mark, anchor: anchor))
    }

    mutating func collectionEnd(at mark: YAMLMark) throws(YAMLError) {
        guard let open = stack.popLast() else { throw YAMLError(message: "unbalanced YAML collection", mark: mark) }
        let node: YAMLNode = open.isMapping ? .mapping(open.pairs, open.mark) : .sequence(open.items, open.mark)
        add(Built(node: node, size: open.size, height: open.height), anchor: open.anchor)
    }

    private mutating func add(_ built: Built, anchor: String?) {
        if let anchor { anchors[anchor] = built }
        guard !stack.isEmpty else {
            document = built.node
            return
        }
        let top = stack.count - 1
        stack[top].size += built.size
        stack[top].height = max(stack[top].height, built.height + 1)
        if !stack[top].isMapping {
            stack[top].items.append(built.node)
        } else if let key = stack[top].pendingKey {
            stack[top].pairs.append((key, built.node))
            stack[top].pendingKey = nil
        } else {
            stack[top].pendingKey = built.node
        }
    }
}
