import AnnouncementsDomain
import Foundation
import Hummingbird
import NIOCore

/// The fields of an HTML form's post (`application/x-www-form-urlencoded`): `+` for a space, then
/// percent-decoded, and each CR LF back to the LF it was typed as (a browser sends every line
/// break of a `textarea` as CR LF: kept, an edit of the title alone would change every line of the
/// text). A field sent twice is refused, as a JSON body's is.
struct FormBody {
    private var fields: [String: String] = [:]

    /// The fields of `request`'s body, at most `maxBytes` long: a 415 for another type, 413 past
    /// the limit, 400 for text that does not decode.
    static func read(_ request: Request, maxBytes: Int) async throws -> FormBody {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/x-www-form-urlencoded" else {
            throw APIError(.unsupportedMediaType, "a form is sent as application/x-www-form-urlencoded, not \(type ?? "without a Content-Type")")
        }
        let buffer = try await RequestBody.collect(request, maxBytes: maxBytes, what: "the form")
        return try FormBody(String(buffer: buffer))
    }

    init(_ text: String) throws(APIError) {
        for item in text.split(separator: "&", omittingEmptySubsequences: true) {
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(pair[0]), let value = Self.decode(pair.count > 1 ? pair[1] : "") else {
                throw APIError(.badRequest, "the form's field \(VisibleText.quoted(String(pair[0].prefix(40)))) is not valid percent-encoded UTF-8")
            }
            guard fields[name] == nil else { throw APIError(.badRequest, "the form sends field `\(VisibleText.escaped(name))` twice") }
            fields[name] = value
        }
    }

    subscript(_ name: String) -> String? { fields[name] }

    /// A form's name or value as sent: `+` for a space, then percent-decoded, with its line
    /// breaks as LF; nil when it does not decode.
    static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding?.replacingOccurrences(of: "\r\n", with: "\n")
    }
}
