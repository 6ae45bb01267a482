import Hummingbird
import Logging

/// The anchor of the per-request goals: Hummingbird with nothing of ours in it. A plain `Router`
/// with one route, `GET /health`, answering the bytes the real server's health answers with a
/// 10-event log, on the default HTTP/1 server; no middleware, no store, no connection guard.
/// `scripts/http-bench.sh` runs it as a process of its own, like `announcements serve`, so that a
/// route's ratio to it is what our routing, middleware and encoding cost per request.
///
/// A second route, `POST /announcements`, answers 201 with the body it was sent: what a POST of the
/// same size costs Hummingbird alone (the body read, an answer as large written), without a store
/// or a disk. The durable POSTs are held against it to say how much of their time is the
/// framework's.
enum BareServer {
    /// `GET /health` of the real server on the benchmark's log (the seed's 6 events and 4 POSTs):
    /// the same length, so both send the same bytes on the wire.
    static let health = #"{"status":"ok","seq":10,"head":"10:3f9d5e0c1b2a49687f6e5d4c3b2a19087f6e5d4c3b2a19087f6e5d4c3b2a1908"}"#

    /// The largest body `POST /announcements` echoes (the real server's default limit).
    static let echoLimit = 1 << 20

    /// The bare application on `host`:`port` (0: any free port); `onListening` gets the bound port.
    static func application(
        host: String,
        port: Int,
        logger: Logger,
        onListening: @escaping @Sendable (_ port: Int) async -> Void
    ) -> some ApplicationProtocol {
        let body = ByteBuffer(string: health)
        let router = Router()
        router.get("health") { _, _ in
            // The buffer is shared, not copied: the cheapest answer Hummingbird can give.
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
        }
        router.post("announcements") { request, _ in
            let body = try await request.body.collect(upTo: echoLimit)
            return Response(status: .created, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: body))
        }
        return Application(
            router: router,
            // The real server's name, so that its `Server` header costs both the same bytes.
            configuration: .init(address: .hostname(host, port: port), serverName: "announcements"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger
        )
    }
}
