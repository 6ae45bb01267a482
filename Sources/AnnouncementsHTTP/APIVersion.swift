/// The API's versions: v1 lists full announcements, v2 lists summaries (id and title), v3 adds to
/// both when each was created and last changed, its revision and a plain-text excerpt.
public enum APIVersion: String, Sendable, Hashable, CaseIterable {
    case v1 = "1.0"
    case v2 = "2.0"
    case v3 = "3.0"

    /// Reads an `Accept-Version` value: `1.0`, `1`, `2.0`, `2`, `3.0` or `3`, between optional spaces or tabs;
    /// nil for anything else.
    ///
    /// Read as bytes: every versioned request reads it, and trimming it as `Character`s (reversed
    /// twice, then made a `String` again) was a third of a list request's own CPU time.
    public init?(header: String) {
        let bytes = header.utf8
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return nil
        }
        let value = bytes[first...last]
        if value.elementsEqual("1.0".utf8) || value.elementsEqual("1".utf8) {
            self = .v1
        } else if value.elementsEqual("2.0".utf8) || value.elementsEqual("2".utf8) {
            self = .v2
        } else if value.elementsEqual("3.0".utf8) || value.elementsEqual("3".utf8) {
            self = .v3
        } else {
            return nil
        }
    }

    /// The supported versions, as a client writes them.
    public static var supported: [String] { allCases.map(\.rawValue) }

    /// What an announcement's ETag adds for this version's representation of it (v1 and v2 share one).
    var tagSuffix: String { self == .v3 ? "-v3" : "" }

    /// The path prefix that asks for this version (`/v3/announcements`).
    var pathPrefix: String { "v" + rawValue.prefix(1) }
}

import HTTPTypes
import Hummingbird

extension APIVersion {
    /// The version a request's `Accept-Version` names; nil without the header, 406 for an unsupported one.
    init?(of request: Request) throws(APIError) {
        guard let header = request.headers[.acceptVersion] else { return nil }
        guard let version = APIVersion(header: header) else { throw .unsupportedVersion(header) }
        self = version
    }
}
