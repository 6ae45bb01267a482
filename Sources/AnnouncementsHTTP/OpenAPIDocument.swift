import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The API's OpenAPI 3.1 document (`Resources/openapi.yaml`), served as it is in the repository.
enum OpenAPIDocument {
    /// The document's bytes, read once from the module's resources; nil if the build lacks them.
    static let bytes: ByteBuffer? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")
        .flatMap { try? Data(contentsOf: $0) }
        .map { ByteBuffer(data: $0) }

    static func add(to router: Router<BasicRequestContext>) {
        router.get("openapi.yaml") { _, _ in
            guard let bytes else {
                throw APIError(.serviceUnavailable, "this build has no OpenAPI document: Resources/openapi.yaml was not bundled")
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: bytes))
        }
    }
}
