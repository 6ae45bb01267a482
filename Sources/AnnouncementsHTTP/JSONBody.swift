import AnnouncementsDomain
import Hummingbird
import NIOCore
import NIOHTTP1

/// A write's JSON body, checked before it is read: `Content-Type: application/json` in UTF-8
/// (or, for a PATCH, `application/merge-patch+json`, RFC 7396, whose rules it follows: a field
/// left out stays, `null` clears) (else 415), not encoded (a `Content-Encoding` other than
/// `identity` is a 415 that says so, with `Accept-Encoding: identity`, RFC 9110 15.5.16) and at
/// most `maxBytes` (else 413). The one place these checks live.
enum JSONBody {
    /// The patch documents a PATCH takes, as `Accept-Patch` says (RFC 5789 3.1): on a PATCH's 415,
    /// and on `OPTIONS` of a resource that takes PATCH.
    static let acceptPatch = "application/merge-patch+json, application/json"

    /// The body's bytes; `what` names what to send (`the announcement`, `the erasure's reason`).
    static func collect(_ request: Request, maxBytes: Int, what: String) async throws -> ByteBuffer {
        let types = request.method == .patch ? ["application/json", "application/merge-patch+json"] : ["application/json"]
        guard let type = request.headers[.contentType].flatMap(ContentType.init), types.contains(type.essence) else {
            // A PATCH's 415 says which patch documents it takes (RFC 5789 2.2).
            let accepted: HTTPFields = request.method == .patch ? [.acceptPatch: acceptPatch] : [:]
            throw APIError(.unsupportedMediaType, "send \(what) as JSON, with Content-Type: \(types.joined(separator: " or "))", headers: accepted)
        }
        if let charset = type.parameters["charset"], charset.lowercased() != "utf-8" {
            throw APIError(.unsupportedMediaType, "JSON is UTF-8: send Content-Type: \(type.essence) with charset=utf-8 or no charset, not \(charset)")
        }
        let codings = request.headers[values: .contentEncoding].flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
        if let coding = codings.first(where: { $0 != "identity" }) {
            throw APIError(
                .unsupportedMediaType,
                "send \(what) as it is, without Content-Encoding (\(VisibleText.escaped(coding)) is not taken for a request body)",
                headers: [.acceptEncoding: "identity"]
            )
        }
        return try await RequestBody.collect(request, maxBytes: maxBytes, what: what)
    }
}

/// A request's body, whatever its type: at most `maxBytes` (else 413), complete (else 400), and
/// not empty (else 411 or 400).
enum RequestBody {
    /// The body's bytes; `what` names what to send.
    static func collect(_ request: Request, maxBytes: Int, what: String) async throws -> ByteBuffer {
        let body = try await read(request, maxBytes: maxBytes)
        if body.readableBytes == 0 {
            // Without a length or chunks, a request's body ends with its head (an HTTP/1.0 client
            // that means to send one until it closes cannot, to a server that answers).
            if request.headers[.contentLength] == nil, request.headers[.transferEncoding] == nil {
                throw APIError(.lengthRequired, "send \(what) as the request body, with a Content-Length header (or Transfer-Encoding: chunked)")
            }
            throw APIError(.badRequest, "the request body is empty: send \(what)")
        }
        return body
    }

    /// The body's bytes, empty or not: at most `maxBytes` (else 413), complete (else 400).
    static func read(_ request: Request, maxBytes: Int) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: maxBytes)
        } catch is NIOTooManyBytesError {
            throw APIError(.contentTooLarge, "the request body is larger than \(maxBytes) bytes, the most this server reads (it follows `max_body_bytes` in its config)")
        } catch let error as HTTPParserError {
            // The body was cut off by bytes that are not HTTP: none of it is used.
            throw APIError(.badRequest, "the request body is not valid HTTP/1.1 (\(error.inWords)); nothing was written, and the connection is closed")
        }
    }
}
