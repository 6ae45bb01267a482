import HTTPTypes
import Hummingbird
import NIOCore

/// The API's OpenAPI 3.1 document (`OpenAPIDocument+YAML.swift`), served at `GET /openapi.yaml`.
/// It is part of the executable: no resource folder has to travel with the binary.
enum OpenAPIDocument {
    /// The document's bytes, encoded once.
    static let bytes = ByteBuffer(string: yaml)

    static func add(to router: Router<BasicRequestContext>) {
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: bytes))
        }
    }
}
