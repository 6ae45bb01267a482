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

    static func add(to router: Router<AnnouncementsRequestContext>) {
        router.get("openapi.yaml") { request, _ in
            let body = ContentCoding.preferred(by: request).flatMap { compressed[$0] } ?? CodedBody(plain: bytes)
            var response = Response.coded(body, contentType: "application/yaml")
            response.headers[.vary] = "Accept-Encoding"
            return response
        }
    }
}
