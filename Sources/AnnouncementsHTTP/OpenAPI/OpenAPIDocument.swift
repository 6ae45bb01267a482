import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import NIOCore

/// The API's OpenAPI 3.1 document (`OpenAPIDocument+YAML.swift`), served at `GET /openapi.yaml`.
/// It is part of the executable: no resource folder has to travel with the binary.
enum OpenAPIDocument {
    /// The document's bytes, encoded once.
    static let bytes = ByteBuffer(string: yaml)

    /// The document compressed with each coding, once, when first asked for.
    static let compressed = Dictionary(uniqueKeysWithValues: ContentCoding.allCases.map { ($0, CodedBody(bytes, compressedWith: $0)) })

    /// Its ETag (before the body's coding): the first bytes of its SHA-256, which change only with
    /// the document (another version of the server).
    static let etag = "\"openapi-\(LineHash(of: Array(yaml.utf8)).description.prefix(16))\""

    /// `GET /openapi.yaml`: `Cache-Control: no-cache` with its ETag, so that a cache asks again
    /// and gets a 304 until the server is upgraded.
    static func add(to router: Router<AnnouncementsRequestContext>) {
        router.get("openapi.yaml") { request, _ in
            let body = ContentCoding.preferred(by: request).flatMap { compressed[$0] } ?? CodedBody(plain: bytes)
            let tag = ContentCoding.tagged(etag, body.coding)
            var response = try ReadRoutes.conditional(request, etag: tag) ?? Response.coded(body, contentType: "application/yaml")
            response.headers[.vary] = "Accept-Encoding"
            response.headers[.cacheControl] = "no-cache"
            response.headers[.eTag] = tag
            return response
        }
    }
}
