import AnnouncementsDomain
import HTTPTypes
import Hummingbird

/// An error as the API answers it: `{"error": <status>, "message": "…"}`, plus the field errors
/// of a 422, the details some errors carry and any extra headers; in XML
/// (`<error><error>404</error><message>…</message></error>`) to a client whose `Accept` prefers
/// XML. Every error a request can meet becomes one of these, in `ErrorMiddleware`, the one place
/// where errors turn into responses.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var message: String
    public var fieldErrors: [FieldProblem]
    public var headers: HTTPFields
    /// Members of the body after the message (`"lastSeq":11`, `"needs":["editor","admin"]`).
    var details: [Detail] = []

    /// A member of an error's body beyond its status and message.
    struct Detail: Sendable {
        var name: String
        var value: Value

        enum Value: Sendable {
            case integer(Int)
            case string(String)
            case strings([String])
        }

        init(_ name: String, _ value: Value) {
            self.name = name
            self.value = value
        }
    }

    public init(_ status: HTTPResponse.Status, _ message: String, fieldErrors: [FieldProblem] = [], headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.fieldErrors = fieldErrors
        self.headers = headers
    }

    /// The error in the representation the request's `Accept` prefers; JSON when it prefers
    /// none (an `Accept` that allows nothing this API has is itself answered in JSON). No cache
    /// keeps it (`no-store`, unless the error says otherwise): a 404, 405 or 410 is cacheable by
    /// default (RFC 9111 4.2.2), and a proxy would go on answering 404 for an announcement made
    /// since.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let media = (try? MediaType.negotiate(request)) ?? .json
        var response = media == .json
            ? Response.json(jsonBody, status: status)
            : Response(status: status, headers: [.contentType: media.contentType], body: .init(byteBuffer: ByteBuffer(string: xmlBody)))
        response.headers.append(contentsOf: headers)
        response.headers.append(HTTPField(name: .vary, value: "Accept"))
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
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
        for detail in details {
            json.raw(",")
            json.string(detail.name)
            json.raw(":")
            switch detail.value {
            case .integer(let value): json.integer(value)
            case .string(let value): json.string(value)
            case .strings(let values): json.array(values) { json, value in json.string(value) }
            }
        }
        json.raw("}")
        return json.bytes
    }

    /// The body in XML, the same members as elements: `<error><error>404</error><message>…`,
    /// field errors as `<errors><error><field>…</field><message>…</message></error></errors>`, a
    /// list as `<needs><value>editor</value>…</needs>`.
    var xmlBody: String {
        var xml = XMLRepresentation.declaration + "<error><error>\(status.code)</error>"
        func element(_ name: String, _ text: String) {
            xml += "<\(name)>"
            XMLRepresentation.escapeReplacing(text, into: &xml)
            xml += "</\(name)>"
        }
        element("message", message)
        if !fieldErrors.isEmpty {
            xml += "<errors>"
            for problem in fieldErrors {
                xml += "<error>"
                element("field", problem.field)
                element("message", problem.message)
                xml += "</error>"
            }
            xml += "</errors>"
        }
        for detail in details {
            switch detail.value {
            case .integer(let value): xml += "<\(detail.name)>\(value)</\(detail.name)>"
            case .string(let value): element(detail.name, value)
            case .strings(let values):
                xml += "<\(detail.name)>"
                for value in values { element("value", value) }
                xml += "</\(detail.name)>"
            }
        }
        return xml + "</error>"
    }

    static func unsupportedVersion(_ value: String) -> APIError {
        var error = APIError(
            .notAcceptable,
            "Accept-Version \(value) is not supported: send Accept-Version: 1.0, 2.0 or 3.0 (or use the /v1/, /v2/ or /v3/ path prefix)",
            headers: [.vary: "Accept-Version"]
        )
        error.details = [Detail("supported", .strings(APIVersion.supported))]
        return error
    }

    /// A 503 for an event stream past the most allowed open at once (`StreamSlots`).
    static func tooManyStreams(_ maximum: Int) -> APIError {
        APIError(
            .serviceUnavailable,
            "the server has as many event streams open as it allows (\(maximum), half of http.max_connections); retry shortly, or read GET /events page by page",
            headers: [.retryAfter: "5"]
        )
    }

    /// A 409 for a feed position past the log's last seq, given as `source` (`after=14`), with
    /// both in the body: `"after":14,"lastSeq":11`.
    static func beyondLog(after: Int, source: String, lastSeq: Int) -> APIError {
        var error = APIError(
            .conflict,
            "\(source) is beyond the end of the log, which ends at seq \(lastSeq): it may have been restored from an older backup; resume from \(lastSeq), or from 0 to read it all again"
        )
        error.details = [Detail("after", .integer(after)), Detail("lastSeq", .integer(lastSeq))]
        return error
    }
}
