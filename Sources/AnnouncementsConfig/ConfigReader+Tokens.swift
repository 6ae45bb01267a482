import AnnouncementsDomain

extension ConfigReader {
    /// `tokens:`, a mapping from each token's name to the token (`name: token`, an editor's) or to
    /// `{token: …, role: …}`. A token is literal, or `env:NAME` read from the environment (unset or
    /// empty: disabled).
    func tokens(_ node: YAMLNode, environment: [String: String]) throws(ConfigError) -> [Configuration.Token] {
        if node.isNull { return [] }
        guard case .mapping(let pairs, _) = node else {
            throw error(node, key: "tokens", "expected a mapping from a token's name to the token, found \(node.secretKindDescription)")
        }
        var tokens: [Configuration.Token] = []
        // The names and secrets seen so far, to refuse a repeat in constant time (a config may
        // hold as many tokens as its size allows: a scan of the list for each would be quadratic).
        var names: Set<String> = []
        var owners: [String: String] = [:]
        for (keyNode, value) in pairs {
            let name = try string(keyNode, key: "tokens")
            let key = "tokens.\(name)"
            if let problem = ValidationRules.problem(writer: name) { throw error(keyNode, key: key, "a token's name \(problem)") }
            guard name != "<<" else { throw error(keyNode, key: key, "YAML merge keys (`<<`) are not supported: write each token out") }
            guard name != "seed" else { throw error(keyNode, key: key, "`seed` is reserved for seed data; choose another name") }
            guard names.insert(name).inserted else { throw error(keyNode, key: key, "appears twice") }
            var role = Role.editor
            var specNode = value
            var specKey = key
            if case .mapping = value {
                var found: YAMLNode?
                for (field, fieldValue) in try mapping(value, key: key, allowed: ["token", "role"]) {
                    if field == "token" { found = fieldValue } else { role = try choice(fieldValue, key: "\(key).role", Role.self) }
                }
                guard let found else { throw error(value, key: key, "missing `token` (a literal token, or env:NAME)") }
                specNode = found
                specKey = "\(key).token"
            }
            let (secret, source) = try secret(specNode, key: specKey, environment: environment)
            let token = Configuration.Token(name: name, role: role, token: secret, source: source)
            if let secret = token.token {
                if let other = owners[secret] { throw error(specNode, key: specKey, "has the same token as `\(other)`: each name needs its own") }
                owners[secret] = name
            }
            tokens.append(token)
        }
        return tokens
    }

    /// A secret: literal (source `inline`), or `env:NAME` read from the environment (source `env:NAME`;
    /// nil when unset or empty).
    func secret(_ node: YAMLNode, key: String, environment: [String: String]) throws(ConfigError) -> (secret: String?, source: String) {
        let spec = try nonEmptyString(node, key: key)
        guard let variable = try variable(in: spec, node, key: key, example: "ANNOUNCEMENTS_TOKEN") else {
            if let problem = Self.tokenProblem(spec) { throw error(node, key: key, "the token \(problem)") }
            if let meant = Self.variableMeant(by: spec) {
                throw error(node, key: key, "a config does not expand shell variables: \"\(VisibleText.escaped(String(spec.prefix(40))))\" would be the token itself, as it is written; to read it from the environment, write env:\(meant)")
            }
            return (spec, "inline")
        }
        guard let value = environment[variable], !value.isEmpty else { return (nil, spec) }
        if let problem = Self.tokenProblem(value) { throw error(node, key: key, "the token in $\(variable) \(problem)") }
        return (value, spec)
    }

    /// The variable an `env:NAME` value names, or nil for a literal value. The name is one a shell
    /// can set (letters, digits and `_`, not starting with a digit): any other (`env: NAME`, a
    /// space after it) would never be set, and its token would be off without a word.
    func variable(in spec: String, _ node: YAMLNode, key: String, example: String) throws(ConfigError) -> String? {
        guard spec.hasPrefix("env:") else { return nil }
        let name = spec.dropFirst(4)
        guard !name.isEmpty else { throw error(node, key: key, "`env:` needs a variable name, like env:\(example)") }
        guard Self.isVariableName(name) else {
            throw error(node, key: key, "`env:` names a variable as a shell does (letters, digits and _, not starting with a digit, nothing around it), like env:\(example); not \"\(VisibleText.escaped(String(name)))\"")
        }
        return String(name)
    }

    /// The variable a literal token seems meant to read (`$NAME`, `${NAME}`, `ENV:NAME`), or nil:
    /// taken as it is, the token would be that text, which anyone who reads the config knows.
    static func variableMeant(by spec: String) -> String? {
        var name = Substring(spec)
        if name.hasPrefix("${"), name.hasSuffix("}") {
            name = name.dropFirst(2).dropLast()
        } else if name.hasPrefix("$") {
            name = name.dropFirst()
        } else if name.lowercased().hasPrefix("env:") {
            name = name.dropFirst(4)
        } else {
            return nil
        }
        return isVariableName(name) ? String(name) : nil
    }

    /// Whether `name` is one a shell can set: letters, digits and `_`, not starting with a digit.
    static func isVariableName(_ name: Substring) -> Bool {
        guard let first = name.first, !first.isNumber else { return false }
        return name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    /// What is wrong with a token, or nil: an `Authorization` header cannot carry spaces at its
    /// ends, line breaks or other control characters, so a token with them would never match.
    static func tokenProblem(_ token: String) -> String? {
        guard ValidationRules.isOneWord(token) else {
            return "must not contain spaces, line breaks or control characters (a header cannot carry them; a file read into the variable may end with a line break)"
        }
        return nil
    }
}
