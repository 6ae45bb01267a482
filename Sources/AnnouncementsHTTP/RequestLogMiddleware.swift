import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// One access-log line per request, and its count and duration in the metrics. The line's message
/// is `GET "/announcements?limit=10" 200 1.25ms 1234B` (method, path with its query, status,
/// duration, bytes sent, `-` for a stream); its metadata holds the same as fields (`http.method`,
/// `http.path`, `http.status`, `http.duration_ms`, `http.bytes`), with `client.address` and
/// `request.id`, and `auth.error` for a refusal with a bearer challenge (`no_token`, `other_scheme`,
/// or the challenge's code: `invalid_token`, `invalid_request`, `insufficient_scope`; see
/// `Challenge`) or a web page's 401 (`no_token`, `invalid_token`: `Challenge.pageError`, taken off
/// here): the keys of a JSON log line. No credentials: headers are not logged, and of the
/// query only the values of the parameters the route takes (`max`, `after`, …) are: any other's is
/// written `***` (a client that puts a token in the URL, `?access_token=…`, is refused, and the
/// token stays out of the log).
///
/// An incoming `X-Request-ID` of 1 to 128 visible ASCII characters is kept and echoed; any other is
/// replaced by one made here, so that a client cannot write into the log what looks like a field.
/// The routes find it in the context's `requestID`.
struct RequestLogMiddleware<Context: RemoteAddressRequestContext & RequestIDRequestContext>: RouterMiddleware {
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let id = request.headers[.requestID].flatMap(Self.acceptedID) ?? RequestID.next()
        var context = context
        context.requestID = id
        var response = try await next(request, context)
        response.headers[.requestID] = id
        var pageError: String?
        if response.status == .unauthorized, let error = response.headers[Challenge.pageError] {
            pageError = error
            response.headers[Challenge.pageError] = nil
        }
        let duration = ContinuousClock.now - start
        metrics?.request(route: context.endpointPath, method: request.method, status: response.status, duration: duration)
        guard context.logger.logLevel <= .info else { return response }
        let microseconds = Int(duration / .microseconds(1))
        let known = context.endpointPath.map { QueryMiddleware<Context>.parameters(route: $0, method: request.method) } ?? []
        let target = request.uri.path + (request.uri.query.map { "?" + AccessLog.query($0, keepingValuesOf: known) } ?? "")
        let milliseconds = AccessLog.milliseconds(microseconds)
        let bytes = response.body.contentLength.map(String.init) ?? "-"
        var metadata: Logger.Metadata = [
            "request.id": "\(id)",
            "client.address": "\(AccessLog.address(context.remoteAddress))",
            "http.method": "\(request.method)",
            "http.path": "\(target)",
            "http.status": "\(response.status.code)",
            "http.duration_ms": "\(milliseconds)",
            "http.bytes": "\(bytes)",
        ]
        // A refused token: whether none was sent or the one sent will not do (and why).
        if let error = pageError ?? Challenge.error(of: response.headers, request: request.headers) { metadata["auth.error"] = "\(error)" }
        context.logger.info("\(request.method) \(VisibleText.quoted(target)) \(response.status.code) \(milliseconds)ms \(bytes)B", metadata: metadata)
        return response
    }

    /// `id` when it is 1 to 128 visible ASCII characters (no spaces), else nil.
    static func acceptedID(_ id: String) -> String? {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy { (0x21...0x7E).contains($0) } ? id : nil
    }
}

/// How values appear in access-log lines.
enum AccessLog {
    /// `127.0.0.1:52114`, `[::1]:52114`, or `-` when there is no peer (a test's router).
    static func address(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress else { return "-" }
        let port = address.port.map { ":\($0)" } ?? ""
        if case .v6 = address { return "[\(ip)]\(port)" }
        return ip + port
    }

    /// `query` with the value of every parameter not in `known` replaced by `***`: the names stay
    /// (what a client sent, to tell a mistake by), values that may be credentials do not; an item
    /// without `=` that is not a known name may be a credential itself (`?<token>`), and goes too.
    static func query(_ query: String, keepingValuesOf known: [String]) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "=") else {
                return parameter.isEmpty || known.contains(String(parameter)) ? String(parameter) : "***"
            }
            return known.contains(String(parameter[..<equals])) ? String(parameter) : parameter[..<equals] + "=***"
        }.joined(separator: "&")
    }

    /// `1.250` (milliseconds, without the unit) for 1,250 microseconds.
    static func milliseconds(_ microseconds: Int) -> String {
        let fraction = microseconds % 1000
        let padding = fraction < 10 ? "00" : fraction < 100 ? "0" : ""
        return "\(microseconds / 1000).\(padding)\(fraction)"
    }
}
