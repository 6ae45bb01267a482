import AnnouncementsDomain
import HTTPTypes
import Hummingbird

/// An error as the API answers it: `{"error": <status>, "message": "…"}`, plus the field errors
/// of a 422 and any extra headers. Every error a request can meet becomes one of these, in
/// `ErrorMiddleware`, the one place where errors turn into responses.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var message: String
    public var fieldErrors: [FieldProblem]
    public var headers: HTTPFields
    /// Extra members of the body, already encoded (e.g. `"supported":["1.0","2.0"]`).
    var extraJSON: String?

    public init(_ status: HTTPResponse.Status, _ message: String, fieldErrors: [FieldProblem] = [], headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.fieldErrors = fieldErrors
        self.headers = headers
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = Response.json(jsonBody, status: status)
        response.headers.append(contentsOf: headers)
        return response
    }

    /// The body: `{"error": <status>, "message": "…"}` and what else the error carries.
    var jsonBody: [UInt8] {
        var json = JSONBytes()
        json.raw(#"{"error":"#)
        json.integer(status.code)
        json.raw(#","message":"#)
        json.string(message)
        if !fieldErrors.isEmpty {
            json.raw(#","errors":"#)
            json.array(fieldErrors) { json, problem in
                json.raw(#"{"field":"#); json.string(problem.field)
                json.raw(#","message":"#); json.string(problem.message); json.raw("}")
            }
        }
        if let extraJSON { json.raw(",\(extraJSON)") }
        json.raw("}")
        return json.bytes
    }

    static func unsupportedVersion(_ value: String) -> APIError {
        var error = APIError(
            .notAcceptable,
            "Accept-Version \(value) is not supported: send Accept-Version: 1.0 or 2.0 (or use the /v1/ or /v2/ path prefix)",
            headers: [.vary: "Accept-Version"]
        )
        error.extraJSON = #""supported":["# + APIVersion.supported.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        return error
    }

    /// A 409 for a feed position past the log's last seq, given as `source` (`after=14`), with
    /// both in the body: `"after":14,"lastSeq":11`.
    static func beyondLog(after: Int, source: String, lastSeq: Int) -> APIError {
        var error = APIError(
            .conflict,
            "\(source) is beyond the end of the log, which ends at seq \(lastSeq): it may have been restored from an older backup; resume from \(lastSeq), or from 0 to read it all again"
        )
        error.extraJSON = #""after":\#(after),"lastSeq":\#(lastSeq)"#
        return error
    }
}
