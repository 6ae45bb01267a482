import AnnouncementsDomain
import HTTPTypes
import Hummingbird

/// The representations the API speaks: JSON, and XML for the older clients.
enum MediaType: String, Sendable, Hashable {
    case json, xml

    /// The exact Content-Type of each (the original clients compare the JSON one as a string).
    var contentType: String {
        switch self {
        case .json: "application/json;charset=UTF-8"
        case .xml: "application/xml;charset=UTF-8"
        }
    }

    /// What the request's `Accept` allows: JSON when it allows JSON (or says nothing), else XML
    /// when it allows XML; a 406 when it allows neither.
    static func negotiate(_ request: Request) throws(APIError) -> MediaType {
        guard let accept = request.headers[.accept], !accept.isEmpty else { return .json }
        let ranges = accept.split(separator: ",").compactMap { range -> String? in
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            // A range with q=0 is one the client refuses.
            if parts.dropFirst().contains(where: { $0 == "q=0" || $0 == "q=0.0" || $0 == "q=0.00" || $0 == "q=0.000" }) { return nil }
            return parts.first
        }
        if ranges.contains(where: { ["application/json", "application/*", "*/*"].contains($0) }) { return .json }
        if ranges.contains(where: { ["application/xml", "text/xml", "text/*"].contains($0) }) { return .xml }
        throw APIError(.notAcceptable, "Accept: \(accept) allows no representation this API has: ask for application/json or application/xml")
    }
}
