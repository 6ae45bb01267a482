import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import Logging

/// One access-log line per request: method, path (quoted), status, duration and request id. An
/// incoming `X-Request-ID` of 1 to 128 visible ASCII characters is kept and echoed; any other is
/// replaced by one made here, so that a client cannot write into the log what looks like a field.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let id = request.headers[.requestID].flatMap(Self.acceptedID) ?? RequestID.next()
        var response = try await next(request, context)
        response.headers[.requestID] = id
        let microseconds = Int((ContinuousClock.now - start) / .microseconds(1))
        context.logger.info(
            "\(request.method) \(VisibleText.quoted(request.uri.path)) \(response.status.code) \(AccessLog.milliseconds(microseconds))",
            metadata: ["request.id": "\(id)"]
        )
        return response
    }

    /// `id` when it is 1 to 128 visible ASCII characters (no spaces), else nil.
    static func acceptedID(_ id: String) -> String? {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) } ? id : nil
    }
}

/// How values appear in access-log lines.
enum AccessLog {
    /// `1.25ms` for 1,250 microseconds.
    static func milliseconds(_ microseconds: Int) -> String {
        let fraction = microseconds % 1000
        let padding = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return "\(microseconds / 1000).\(padding)\(fraction)ms"
    }
}
