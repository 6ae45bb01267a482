import HTTPTypes
import Hummingbird

/// The content codings the API compresses responses with (RFC 9110 §8.4.1): gzip, and HTTP's
/// `deflate`, which is the zlib format (RFC 1950), not a bare deflate stream.
enum ContentCoding: String, Sendable, Hashable, CaseIterable {
    case gzip, deflate

    /// Bodies smaller than this go as they are: compressing them saves too little to be worth
    /// the CPU on both ends, and can make them larger.
    static let minimumBytes = 1024

    /// The coding to compress a response to `request` with: the one its `Accept-Encoding` weighs
    /// highest (gzip before deflate on a tie), or nil for none.
    ///
    /// None when the request has no `Accept-Encoding` (RFC 9110 would allow any coding, but a client
    /// that says nothing gets the bytes as they are), when it refuses both codings (`gzip;q=0`), or
    /// when it weighs `identity` above them. A request that refuses `identity` as well as both codings
    /// still gets the plain bytes: the API has nothing else to send (RFC 9110 §12.5.3 allows it).
    static func preferred(by request: Request) -> ContentCoding? {
        preferred(acceptEncoding: request.headers[values: .acceptEncoding])
    }

    /// `preferred(by:)` for the values of the request's `Accept-Encoding` fields (empty without one).
    static func preferred(acceptEncoding values: [String]) -> ContentCoding? {
        guard !values.isEmpty else { return nil }
        let weights = AcceptEncoding(values.joined(separator: ","))
        var best: (coding: ContentCoding, weight: Int)?
        for coding in allCases {
            // A weight of 0 refuses the coding; on a tie the earlier (gzip) stays.
            guard let weight = weights.weight(of: coding), weight > best?.weight ?? 0 else { continue }
            best = (coding, weight)
        }
        guard let best else { return nil }
        // `identity` counts only when the client weighed it (by name or by `*`) above the coding.
        if let identity = weights.weight(ofName: "identity"), identity > best.weight { return nil }
        return best.coding
    }

    /// The coding's `Content-Encoding` value.
    var headerValue: String { rawValue }

    /// `etag` with this coding's name added inside the quotes (`"6-2"` becomes `"6-2-gzip"`): a
    /// compressed body is another representation, so a strong ETag must differ (RFC 9110 §8.8.3).
    func tagged(_ etag: String) -> String {
        guard etag.hasSuffix("\"") else { return etag }
        return etag.dropLast() + "-\(rawValue)\""
    }

    /// `etag` tagged for `coding`, or as it is when the body goes uncompressed.
    static func tagged(_ etag: String, _ coding: ContentCoding?) -> String {
        coding?.tagged(etag) ?? etag
    }
}
