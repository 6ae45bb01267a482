/// A `Content-Type` value, parsed (RFC 9110 §8.3.1): `type/subtype` and its parameters. Compared
/// as parsed, never by prefix: `application/jsonfoo` is not JSON.
struct ContentType: Sendable, Hashable {
    /// `type/subtype`, lowercased.
    var essence: String
    /// Parameter names lowercased, values unquoted.
    var parameters: [String: String]

    /// `application/json`, with no parameters: what nearly every write sends.
    static let json = ContentType(essence: "application/json", parameters: [:])

    init(essence: String, parameters: [String: String]) {
        self.essence = essence
        self.parameters = parameters
    }

    /// nil when `text` is not `type/subtype` followed by `; name=value` parameters.
    init?(_ text: String) {
        // The common value, compared as bytes: the general parse below walks `Character`s.
        if text.utf8.elementsEqual(Self.json.essence.utf8) {
            self = Self.json
            return
        }
        var parts = text.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let essence = parts.next().map(\.trimmingSpaces) else { return nil }
        let halves = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves.allSatisfy({ !$0.isEmpty && $0.allSatisfy(Self.isTokenCharacter) }) else { return nil }
        self.essence = essence.lowercased()
        parameters = [:]
        while let parameter = parts.next().map(\.trimmingSpaces) {
            // An empty one (`application/json;`) is allowed, and means nothing (RFC 9110 5.6.6).
            if parameter.isEmpty { continue }
            guard let equals = parameter.firstIndex(of: "=") else { return nil }
            let name = parameter[..<equals]
            var value = parameter[parameter.index(after: equals)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            guard !name.isEmpty, name.allSatisfy(Self.isTokenCharacter) else { return nil }
            parameters[name.lowercased()] = String(value)
        }
    }

    /// The characters of an RFC 9110 token.
    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, ascii > 0x20, ascii < 0x7F else { return false }
        return !"\"(),/:;<=>?@[\\]{}".contains(character)
    }
}
