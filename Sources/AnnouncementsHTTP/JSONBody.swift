import Hummingbird

/// A write's JSON body, checked before it is read: `Content-Type: application/json` in UTF-8
/// (or, for a PATCH, `application/merge-patch+json`, RFC 7396, whose rules it follows: a field
/// left out stays, `null` clears) (else 415) and at most `maxBytes` (else 413). The one place both
/// checks live.
enum JSONBody {
    /// The body's bytes; `what` names what to send (`the announcement`, `the erasure's reason`).
    static func collect(_ request: Request, maxBytes: Int, what: String) async throws -> ByteBuffer {
        let types = request.method == .patch ? ["application/json", "application/merge-patch+json"] : ["application/json"]
        guard let type = request.headers[.contentType].flatMap(ContentType.init), types.contains(type.essence) else {
            throw APIError(.unsupportedMediaType, "send \(what) as JSON, with Content-Type: \(types.joined(separator: " or "))")
        }
        if let charset = type.parameters["charset"], charset.lowercased() != "utf-8" {
            throw APIError(.unsupportedMediaType, "JSON is UTF-8: send Content-Type: \(type.essence) with charset=utf-8 or no charset, not \(charset)")
        }
        do {
            return try await request.body.collect(upTo: maxBytes)
        } catch {
            throw APIError(.contentTooLarge, "the request body is larger than \(maxBytes) bytes, the most this server reads (it follows `max_body_bytes` in its config)")
        }
    }
}
