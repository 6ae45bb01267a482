/// An `Accept-Encoding` value, parsed (RFC 9110 §12.5.3): each coding the client names, with its
/// weight in thousandths (`gzip;q=0.5` weighs 500, a coding without `q` weighs 1000).
///
/// Lenient, as proactive negotiation may be: an element that does not parse (`gzip;q=2`,
/// `gzip;q=high`) is left out, as if the client had not named that coding, so the worst a
/// malformed header can do is get the plain bytes.
struct AcceptEncoding: Sendable, Hashable {
    /// Weights by coding name, lowercased; `*` stands for every coding not named.
    private(set) var weights: [String: Int] = [:]

    init(_ header: String) {
        for element in header.split(separator: ",") {
            var parts = element.split(separator: ";").map { $0.trimmingSpaces.lowercased() }.makeIterator()
            guard let name = parts.next(), !name.isEmpty else { continue }
            var weight: Int? = 1000
            while let parameter = parts.next() {
                guard parameter.hasPrefix("q=") else { continue }  // other parameters mean nothing here
                weight = Self.qvalue(parameter.dropFirst(2))
            }
            // The first weight a name gets counts; a repeat does not override it.
            if let weight, weights[name] == nil { weights[name] = weight }
        }
    }

    /// The weight of `coding`: its own, else that of `*`; nil when neither is named.
    func weight(of coding: ContentCoding) -> Int? {
        // `x-gzip` is gzip's old name, still to be taken as gzip (RFC 9110 §8.4.1.3).
        let own = weights[coding.rawValue] ?? (coding == .gzip ? weights["x-gzip"] : nil)
        return own ?? weights["*"]
    }

    /// The weight of the coding called `name` (such as `identity`), or of `*`; nil when neither is named.
    func weight(ofName name: String) -> Int? {
        weights[name] ?? weights["*"]
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

private extension Substring {
    /// Without the spaces and tabs around it.
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
