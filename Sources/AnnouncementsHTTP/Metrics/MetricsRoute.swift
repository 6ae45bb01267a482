import AnnouncementsStore
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET /metrics`: the metrics in Prometheus' text format, the store's gauges sampled first. With
/// a token (`metrics.token` in the config), only a request that sends it may read them.
public struct MetricsEndpoint: Sendable {
    /// The bearer token a scraper must send; nil: open, like `/health`.
    public var token: String?
    /// The metrics' text.
    public var render: @Sendable () -> [UInt8]

    public init(token: String? = nil, render: @escaping @Sendable () -> [UInt8]) {
        self.token = token
        self.render = render
    }

    func add(to router: Router<AnnouncementsRequestContext>, store: EventStore, metrics: ServerMetrics, streams: StreamSlots, connections: ConnectionCount?) {
        let access = token.map { Access([(name: "metrics", token: $0, role: .auditor)]) }
        router.get("metrics") { request, _ throws(APIError) in
            if let access {
                // Missing or another token (an API token is not it): one message, naming the one
                // it needs (the API's "not one of the configured tokens" would be wrong of an API
                // token); the challenge says which. A malformed one is the API's 400.
                let authorized: Bool
                var challenge = Challenge.bearer
                do throws(APIError) {
                    authorized = try access.bearerCaller(request) != nil
                } catch {
                    guard error.status != .badRequest else { throw error }
                    authorized = false
                    if error.headers[.wwwAuthenticate] != nil { challenge = error.headers }
                }
                guard authorized else {
                    throw APIError(.unauthorized, "/metrics needs the token set as metrics.token in the config (not an API token): send Authorization: Bearer <token>", headers: challenge)
                }
            }
            metrics.sample(store, openStreams: streams.count, openConnections: connections?.openNow)
            var response = Response(status: .ok, headers: [.contentType: Self.contentType], body: .init(byteBuffer: ByteBuffer(bytes: render())))
            response.headers[.cacheControl] = "no-store"
            return response
        }
    }

    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
}
