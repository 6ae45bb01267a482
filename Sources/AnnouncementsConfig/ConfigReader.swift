import AnnouncementsDomain

/// Typed access to YAML nodes, with errors that name the key and its place.
struct ConfigReader {
    let path: String

    func error(_ node: YAMLNode, key: String?, _ message: String) -> ConfigError {
        ConfigError(path: path, line: node.mark.line, column: node.mark.column, key: key, message: message)
    }

    /// A mapping's entries, in order; unknown and repeated keys are errors.
    func mapping(_ node: YAMLNode, key: String?, allowed: [String]) throws(ConfigError) -> [(String, YAMLNode)] {
        guard case .mapping(let pairs, _) = node else {
            // The file itself as a value is not shown either: it may be a file of secrets named by
            // mistake (`KEY=value` lines read as one text).
            let found = key.map(Configuration.secretSections.contains) ?? true ? node.secretKindDescription : node.kindDescription
            throw error(node, key: key, "expected a mapping, found \(found)")
        }
        var seen: Set<String> = []
        var fields: [(String, YAMLNode)] = []
        for (keyNode, value) in pairs {
            let name = try string(keyNode, key: key)
            let path = key.map { "\($0).\(name)" } ?? name
            guard allowed.contains(name) else {
                throw error(keyNode, key: path, "unknown key (expected one of: \(allowed.joined(separator: ", ")))")
            }
            guard seen.insert(name).inserted else { throw error(keyNode, key: path, "appears twice") }
            fields.append((name, value))
        }
        return fields
    }

    func list(_ node: YAMLNode, key: String) throws(ConfigError) -> [YAMLNode] {
        if node.isNull { return [] }
        guard case .sequence(let items, _) = node else {
            throw error(node, key: key, "expected a list, found \(node.kindDescription)")
        }
        return items
    }

    func string(_ node: YAMLNode, key: String?) throws(ConfigError) -> String {
        guard case .scalar(let text, _, _) = node, !node.isNull else {
            throw error(node, key: key, "expected a string, found \(node.kindDescription)")
        }
        return text
    }

    func nonEmptyString(_ node: YAMLNode, key: String) throws(ConfigError) -> String {
        let text = try string(node, key: key)
        guard !text.allSatisfy(\.isWhitespace) else { throw error(node, key: key, "must not be empty") }
        return text
    }

    /// A non-empty string without control characters: a path or a host name (a NUL would cut a
    /// path short where the system reads it).
    func pathOrHost(_ node: YAMLNode, key: String) throws(ConfigError) -> String {
        let text = try nonEmptyString(node, key: key)
        guard !ValidationRules.hasControlCharacter(text) else {
            throw error(node, key: key, "must not contain control characters")
        }
        return text
    }

    /// A host to listen on: `pathOrHost`'s, and not a host with a port written into it.
    func host(_ node: YAMLNode, key: String) throws(ConfigError) -> String {
        let host = try pathOrHost(node, key: key)
        if let (name, _) = Configuration.portWritten(in: host) {
            throw error(node, key: key, "\(host) is a host with a port: write the port under `port`, and `host: \(name)`")
        }
        return host
    }

    /// One of `Choice`'s raw values.
    func choice<Choice: RawRepresentable & CaseIterable>(_ node: YAMLNode, key: String, _: Choice.Type) throws(ConfigError) -> Choice where Choice.RawValue == String {
        let text = try string(node, key: key)
        guard let value = Choice(rawValue: text) else {
            throw error(node, key: key, "must be one of \(Choice.allCases.map { "`\($0.rawValue)`" }.joined(separator: ", ")), not \"\(text)\"")
        }
        return value
    }

    func integer(_ node: YAMLNode, key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        // A plain value's digits after its sign, when that is all it holds.
        var digits: Substring?
        if case .scalar(let text, true, _) = node, case let unsigned = text.drop(while: { $0 == "-" || $0 == "+" }),
           !unsigned.isEmpty, unsigned.allSatisfy({ $0.isASCII && $0.isNumber }) {
            digits = unsigned
        }
        // `017`: YAML 1.1 (libyaml's, and other tools') reads it as octal 15, Swift as 17.
        if case .scalar(let text, _, _) = node, let digits, digits.count > 1, digits.first == "0" {
            throw error(node, key: key, "must be written without leading zeros (YAML 1.1 tools read \(text) as an octal number), not \(text)")
        }
        guard case .scalar(let text, true, _) = node, let value = Int(text) else {
            // Digits that do not fit an Int: out of range, not "not an integer".
            if case .scalar(let text, _, _) = node, digits != nil {
                throw error(node, key: key, "must be between \(range.lowerBound) and \(range.upperBound), not \(text)")
            }
            let expected = "expected a whole number from \(range.lowerBound) to \(range.upperBound), found \(node.kindDescription)"
            if case .scalar(let text, false, _) = node, let number = Int(text), range.contains(number) {
                throw error(node, key: key, expected + ": write the number without quotes")
            }
            throw error(node, key: key, expected)
        }
        guard range.contains(value) else {
            throw error(node, key: key, "must be between \(range.lowerBound) and \(range.upperBound), not \(value)")
        }
        return value
    }

    /// `{title, body}`: a seed announcement.
    func draft(_ node: YAMLNode, key: String) throws(ConfigError) -> AnnouncementDraft {
        var draft = AnnouncementDraft(title: "")
        var hasTitle = false
        for (name, value) in try mapping(node, key: key, allowed: ["title", "body"]) {
            if name == "title" {
                draft.title = try string(value, key: "\(key).title")
                hasTitle = true
            } else if !value.isNull {
                draft.body = try string(value, key: "\(key).body")
            }
        }
        guard hasTitle else { throw error(node, key: key, "missing `title`") }
        return draft
    }

    /// Checks a seed announcement against the rules, pointing at the offending field.
    func check(_ node: YAMLNode, key: String, rules: ValidationRules) throws(ConfigError) {
        guard case .mapping(let pairs, _) = node else { return }
        let draft = try draft(node, key: key)
        if let problem = rules.problems(draft).first {
            let field = pairs.first { if case .scalar(problem.field, _, _) = $0.key { true } else { false } }
            throw error(field?.value ?? node, key: "\(key).\(problem.field)", problem.message)
        }
    }
}
