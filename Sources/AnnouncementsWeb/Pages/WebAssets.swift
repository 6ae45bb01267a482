/// A stylesheet or script the pages load, compiled into the binary.
public struct WebAsset: Sendable {
    /// `Content-Type`.
    public let contentType: String
    public let bytes: [UInt8]
    /// Where it is served: its name with a digest of its bytes (`/assets/app.1a2b3c4d5e6f7a8b.css`),
    /// so that a browser may keep it for good and a new release is fetched at once.
    public let path: String

    init(name: String, type: String, contentType: String, bytes: [UInt8]) {
        self.contentType = contentType
        self.bytes = bytes
        path = "/assets/\(name).\(Self.digest(bytes)).\(type)"
    }

    /// FNV-1a (64 bits) in hex: enough to tell releases apart, not a security measure.
    private static func digest(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// The assets the pages load.
public enum WebAssets {
    /// The pages' stylesheet.
    public static let stylesheet = WebAsset(name: "app", type: "css", contentType: "text/css; charset=utf-8", bytes: PackageResources.app_css)
    /// The pages' one script (an ES module): dates in the reader's locale, live updates, previews.
    public static let script = WebAsset(name: "app", type: "js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js)
    /// The stylesheet inside an announcement's frame (see `BodyFrame`).
    public static let bodyStylesheet = WebAsset(name: "body", type: "css", contentType: "text/css; charset=utf-8", bytes: PackageResources.body_css)

    /// The pages' icon.
    public static let icon = WebAsset(name: "icon", type: "svg", contentType: "image/svg+xml", bytes: PackageResources.icon_svg)

    /// The asset served at `path`, or nil.
    public static func asset(at path: Substring) -> WebAsset? {
        [stylesheet, script, bodyStylesheet, icon].first { $0.path.utf8.elementsEqual(path.utf8) }
    }
}
