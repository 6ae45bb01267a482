/// A header that lists choices with weights, as `Accept` and `Accept-Encoding` do (RFC 9110
/// §12.4.2): `gzip;q=0.5, deflate` or `application/json;q=0.9, */*;q=0.1`. One reading for both.
///
/// Each element's value comes lowercased, with its weight in thousandths (1000 when it has no
/// `q`). Lenient, as proactive negotiation may be: an element whose weight does not parse
/// (`q=2`, `q=high`) is left out, as if the client had not named it, and so is an empty one;
/// parameters other than `q` mean nothing here.
struct WeightedChoices: Sendable, Hashable {
    struct Choice: Sendable, Hashable {
        var value: Substring
        var weight: Int
    }

    let choices: [Choice]

    init(_ header: String) {
        var choices: [Choice] = []
        for element in header.split(separator: ",") {
            var parts = element.split(separator: ";").map { $0.trimmingSpaces.lowercased()[...] }.makeIterator()
            guard let value = parts.next(), !value.isEmpty else { continue }
            var weight: Int? = 1000
            while let parameter = parts.next() {
                guard parameter.hasPrefix("q=") else { continue }
                weight = Self.qvalue(parameter.dropFirst(2))
            }
            if let weight { choices.append(Choice(value: value, weight: weight)) }
        }
        self.choices = choices
    }

    /// A qvalue in thousandths: `0`, `0.5`, `1`, `1.000` (at most three decimals, at most 1); nil
    /// for anything else.
    static func qvalue(_ text: Substring) -> Int? {
        let halves = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = halves.first, whole == "0" || whole == "1" else { return nil }
        let decimals = halves.count == 2 ? halves[1] : ""
        guard decimals.count <= 3, decimals.allSatisfy({ $0 >= "0" && $0 <= "9" }) else { return nil }
        let thousandths = Int(decimals + String(repeating: "0", count: 3 - decimals.count)) ?? 0
        let value = (whole == "1" ? 1000 : 0) + thousandths
        return value <= 1000 ? value : nil
    }
}
