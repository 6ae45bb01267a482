import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a request failed. Each case is a different thing for an app to do: retry later
/// (`unreachable`), show the server's message (`status`), reload (`changedBySomeoneElse`),
/// follow the feed again from a position the log has (`positionBeyondLog`), or report a server
/// that does not speak this API (`invalidJSON`, `unexpectedJSON`, `badEventStream`).
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, or did not answer in time.
    case unreachable(url: URL, underlying: URLError)
    /// The server answered with an error status; `message` and `fieldErrors` are its own words.
    case status(code: Int, message: String, fieldErrors: [FieldError])
    /// A write's `ifMatch` revision is no longer current (HTTP 412): fetch the announcement again.
    case changedBySomeoneElse(message: String)
    /// The feed was asked for the events after `requested`, but the server's log ends at `lastSeq`
    /// (HTTP 409): it was most likely restored from an older backup, so the events this app saw
    /// after `lastSeq` are gone, and new ones will take their seqs. Resume after `lastSeq` (what
    /// the app holds past it may differ from the log), or from 0 to rebuild from the whole log.
    case positionBeyondLog(requested: Int, lastSeq: Int)
    /// The response body is not JSON at all.
    case invalidJSON(detail: String)
    /// The response is JSON but lacks a field the API promises, or has it with the wrong type;
    /// `field` is empty where the answer as a whole is not what the API answers (an object for a
    /// list).
    case unexpectedJSON(field: String, detail: String)
    /// The event stream broke its format (an event that never ends, past the size any of this
    /// API's events can have): the server is not this API, or is broken.
    case badEventStream(detail: String)

    /// A problem with one field of a rejected write (HTTP 422).
    public struct FieldError: Sendable, Hashable, Codable {
        public var field: String
        public var message: String

        public init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    /// The HTTP status, for `status`, `changedBySomeoneElse` and `positionBeyondLog`.
    public var statusCode: Int? {
        switch self {
        case .status(let code, _, _): code
        case .changedBySomeoneElse: 412
        case .positionBeyondLog: 409
        default: nil
        }
    }

    /// Whether asking again later may succeed (after the client's own retries): the network
    /// failed on the way (not the address, a certificate or the system's rules), or the server
    /// could not answer now (429, 500, 502, 503, 504). A write that failed so may have landed:
    /// sent again with the same `idempotencyKey:`, it is made once.
    public var isTemporary: Bool {
        switch self {
        case .unreachable(_, let underlying): AnnouncementsClient.isTransient(underlying)
        case .status(let code, _, _): Self.temporaryStatuses.contains(code)
        default: false
        }
    }

    /// What ends the message of a `status` whose body is not this API's error (a proxy's page,
    /// another program on the server's address): the message is then the status's own words.
    package static let foreignAnswer = " (the answer is not this API's: no message in its body)"

    /// The statuses of a server that could not answer now: busy (429), failing (500), or a
    /// proxy or node that could not reach or be the server (502, 503, 504). Not 501 or 505: what
    /// a server does not do, it will not do later.
    package static let temporaryStatuses: Set<Int> = [429, 500, 502, 503, 504]

    public var description: String {
        switch self {
        case .unreachable(let url, let underlying):
            let host = url.host.map { "\($0)\(url.port.map { ":\($0)" } ?? "")" } ?? url.absoluteString
            return underlying.code == .timedOut
                ? "the server at \(host) did not answer in time"
                : "cannot reach the server at \(host) (\(underlying.localizedDescription))"
        case .status(let code, let message, let fieldErrors):
            // Field errors the message does not already say.
            let fields = fieldErrors.filter { !message.contains($0.message) }.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
            return "the server answered \(code): \(message)\(fields.isEmpty ? "" : " (\(fields))")"
        case .changedBySomeoneElse(let message):
            return "changed by someone else since it was fetched: \(message)"
        case .positionBeyondLog(let requested, let lastSeq):
            return "the server's log ends at seq \(lastSeq), before the events after \(requested) that were asked for: it may have been restored from an older backup; resume from \(lastSeq), or from 0 to read it all again"
        case .invalidJSON(let detail):
            return "the server's answer is not JSON: \(detail)"
        case .unexpectedJSON(let field, let detail) where field.isEmpty:
            return "the server's answer is not what this API answers: \(detail)"
        case .unexpectedJSON(let field, let detail):
            return "the server's answer has no valid `\(field)`: \(detail)"
        case .badEventStream(let detail):
            return "the server's event stream is not this API's: \(detail)"
        }
    }
}

extension ClientError {
    /// The error a failed decode stands for: not JSON at all, or JSON without the data we need.
    init(decoding error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            self = .unexpectedJSON(field: Self.path(context.codingPath + [key]), detail: "missing")
        case .valueNotFound(let type, let context):
            self = .unexpectedJSON(field: Self.path(context.codingPath), detail: "null where \(type) was expected")
        case .typeMismatch(let type, let context):
            self = .unexpectedJSON(field: Self.path(context.codingPath), detail: "expected \(Self.name(of: type))")
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            self = .invalidJSON(detail: (context.underlyingError as? NSError)?.localizedDescription ?? context.debugDescription)
        case .dataCorrupted(let context):
            self = .unexpectedJSON(field: Self.path(context.codingPath), detail: context.debugDescription)
        @unknown default:
            self = .invalidJSON(detail: "\(error)")
        }
    }

    /// `[0].title`, `id`: where in the document a problem is; empty for the document itself.
    static func path(_ keys: [any CodingKey]) -> String {
        let path = keys.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        return path.hasPrefix(".") ? String(path.dropFirst()) : path
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type: "a whole number"
        // Decodable's own names (`Array<Any>`, `Dictionary<String, Any>`), in words.
        case _ where "\(type)".hasPrefix("Array<"): "a list"
        case _ where "\(type)".hasPrefix("Dictionary<"): "an object"
        default: "\(type)"
        }
    }
}
