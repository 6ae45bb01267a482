import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The API's OpenAPI 3.1 document (`Resources/openapi.yaml`), served as it is in the repository.
enum OpenAPIDocument {
    /// The document's bytes, read once from the module's resources; nil if they are not beside the
    /// executable (a binary copied alone). Looked up by hand: SwiftPM's `Bundle.module` stops the
    /// process on Linux when the resource bundle is missing.
    static let bytes: ByteBuffer? = resourceBundle?.url(forResource: "openapi", withExtension: "yaml")
        .flatMap { try? Data(contentsOf: $0) }
        .map { ByteBuffer(data: $0) }

    private static var resourceBundle: Bundle? {
        let name = "announcements_AnnouncementsHTTP"
        let folders = [Bundle.main.resourceURL, Bundle.main.bundleURL, Bundle.main.executableURL?.deletingLastPathComponent()]
        for folder in folders.compactMap({ $0 }) {
            for suffix in [".resources", ".bundle"] {
                if let bundle = Bundle(url: folder.appendingPathComponent(name + suffix)) { return bundle }
            }
        }
        return nil
    }

    static func add(to router: Router<BasicRequestContext>) {
        router.get("openapi.yaml") { _, _ in
            guard let bytes else {
                throw APIError(.serviceUnavailable, "this build has no OpenAPI document: Resources/openapi.yaml was not bundled")
            }
            return Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: bytes))
        }
    }
}
