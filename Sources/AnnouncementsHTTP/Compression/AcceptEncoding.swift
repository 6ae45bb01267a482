/// An `Accept-Encoding` value, parsed (RFC 9110 §12.5.3): each coding the client names, with its
/// weight in thousandths (`gzip;q=0.5` weighs 500, a coding without `q` weighs 1000).
///
/// Read as `WeightedChoices`: an element that does not parse (`gzip;q=2`, `gzip;q=high`) is left
/// out, as if the client had not named that coding, so the worst a malformed header can do is get
/// the plain bytes.
struct AcceptEncoding: Sendable, Hashable {
    /// Weights by coding name, lowercased; `*` stands for every coding not named.
    private(set) var weights: [String: Int] = [:]

    init(_ header: String) {
        // The first weight a name gets counts; a repeat does not override it.
        for choice in WeightedChoices(header).choices where weights[String(choice.value)] == nil {
            weights[String(choice.value)] = choice.weight
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
}
