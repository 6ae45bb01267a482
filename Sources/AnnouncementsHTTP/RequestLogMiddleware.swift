import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// One access-log line per request (method, path, status, duration, request id). An incoming
/// `X-Request-ID` is echoed; otherwise one is made.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let id = request.headers[.requestID].flatMap { $0.isEmpty || $0.count > 200 ? nil : $0 } ?? UUID().uuidString
        var response = try await next(request, context)
        response.headers[.requestID] = id
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info("\(request.method) \(request.uri.path) \(response.status.code) \(String(format: "%.2f", milliseconds))ms", metadata: ["request.id": "\(id)"])
        return response
    }
}
