import Foundation
import Hummingbird
import Logging
import PostgresNIO

/// What a team would build instead of this product with the same framework (issue 37's peer
/// (a)): Hummingbird and postgres-nio's connection pool, one table, one `INSERT … RETURNING` per
/// write, committed durably (PostgreSQL's defaults: `fsync` and `synchronous_commit` on). The
/// routes `make bench` measures, written as plainly as their documentation shows them:
///
///     POST /announcements        {"title", "body"?}, with `Authorization: Bearer TOKEN`: 201, the row
///     GET  /announcements        the first 10 by id: [{"id", "title"}]
///     GET  /announcements/{id}   {"id", "title", "body"}, or 404
///
/// Environment: PEER_PG_HOST (127.0.0.1), PEER_PG_PORT (5432), PEER_PG_USER (postgres),
/// PEER_PG_DATABASE (postgres), PEER_TABLE (peer_announcements: `id bigserial PRIMARY KEY, title
/// text NOT NULL, body text`, made by scripts/http-bench.sh), PEER_TOKEN (bench-token), PEER_PORT
/// (0: any free port). Prints `listening on http://127.0.0.1:PORT` once it listens.
@main
struct PeerServer {
    struct Draft: Decodable {
        var title: String
        var body: String?
    }

    struct Full: ResponseEncodable {
        var id: Int
        var title: String
        var body: String?
    }

    struct Summary: ResponseEncodable {
        var id: Int
        var title: String
    }

    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        var logger = Logger(label: "peer")
        logger.logLevel = .warning
        let client = PostgresClient(
            configuration: .init(
                host: environment["PEER_PG_HOST"] ?? "127.0.0.1",
                port: environment["PEER_PG_PORT"].flatMap(Int.init) ?? 5432,
                username: environment["PEER_PG_USER"] ?? "postgres",
                password: nil,
                database: environment["PEER_PG_DATABASE"] ?? "postgres",
                tls: .disable
            ),
            backgroundLogger: logger
        )
        let table = environment["PEER_TABLE"] ?? "peer_announcements"
        let authorization = "Bearer \(environment["PEER_TOKEN"] ?? "bench-token")"

        let router = Router()
        router.post("announcements") { request, context -> EditedResponse<Full> in
            guard request.headers[.authorization] == authorization else { throw HTTPError(.unauthorized) }
            let draft = try await request.decode(as: Draft.self, context: context)
            guard !draft.title.isEmpty else { throw HTTPError(.unprocessableContent, message: "title must not be empty") }
            let rows = try await client.query(
                "INSERT INTO \(unescaped: table) (title, body) VALUES (\(draft.title), \(draft.body)) RETURNING id, title, body",
                logger: context.logger
            )
            for try await (id, title, body) in rows.decode((Int, String, String?).self) {
                return EditedResponse(status: .created, response: Full(id: id, title: title, body: body))
            }
            throw HTTPError(.internalServerError)
        }
        router.get("announcements") { _, context -> [Summary] in
            let rows = try await client.query("SELECT id, title FROM \(unescaped: table) ORDER BY id LIMIT 10", logger: context.logger)
            var list: [Summary] = []
            for try await (id, title) in rows.decode((Int, String).self) { list.append(Summary(id: id, title: title)) }
            return list
        }
        router.get("announcements/{id}") { _, context -> Full in
            let id = try context.parameters.require("id", as: Int.self)
            let rows = try await client.query("SELECT id, title, body FROM \(unescaped: table) WHERE id = \(id)", logger: context.logger)
            for try await (id, title, body) in rows.decode((Int, String, String?).self) {
                return Full(id: id, title: title, body: body)
            }
            throw HTTPError(.notFound)
        }

        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: environment["PEER_PORT"].flatMap(Int.init) ?? 0)),
            services: [client],
            onServerRunning: { channel in
                print("listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)")
                fflush(nil)
            },
            logger: logger
        )
        try await app.runService()
    }
}
