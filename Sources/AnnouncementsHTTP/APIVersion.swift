/// The API's versions: v1 lists full announcements, v2 lists summaries (id and title).
public enum APIVersion: String, Sendable, Hashable, CaseIterable {
    case v1 = "1.0"
    case v2 = "2.0"

    /// Reads an `Accept-Version` value: `1.0`, `1`, `2.0` or `2`; nil for anything else.
    public init?(header: String) {
        switch String(header.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()) {
        case "1", "1.0": self = .v1
        case "2", "2.0": self = .v2
        default: return nil
        }
    }

    /// The supported versions, as a client writes them.
    public static var supported: [String] { allCases.map(\.rawValue) }
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
