import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// The HTTP rules every route follows: HEAD and OPTIONS, CORS, media types, strict JSON bodies,
/// idempotency keys and request ids.
@Suite struct ProtocolTests {
    // MARK: - HEAD and OPTIONS

    @Test("HEAD answers every GET route with the same headers and no body", arguments: [
        "/announcements", "/announcements/2", "/v1/announcements?max=2", "/announcements/2/history", "/events", "/health", "/openapi.yaml", "/announcements/99",
    ])
    func head(path: String) async throws {
        try await withServer { client, _ in
            let get = try await client.execute(uri: path, method: .get) { $0 }
            try await client.execute(uri: path, method: .head) { response in
                #expect(response.status == get.status)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.contentLength] == String(get.body.readableBytes))
                #expect(response.headers[.contentType] == get.headers[.contentType])
                #expect(response.headers[.eTag] == get.headers[.eTag])
            }
        }
    }

    @Test("HEAD of the event stream says what its GET says, and no Content-Length: its GET has none")
    func headOfStream() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/events", method: .head, headers: [.accept: "text/event-stream"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/event-stream") == true, "\(response.headers)")
                #expect(response.headers[.contentLength] == nil, "\(response.headers)")
                #expect(response.body.readableBytes == 0)
            }
        }
    }

    @Test("the event stream is what Accept asks for with a weight above 0 (text/event-stream;q=0 gets the page); it varies by Accept, Authorization and Last-Event-ID")
    func streamNegotiation() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/events?after=3", method: .get, headers: [.accept: "application/json, text/event-stream;q=0"]) { response in
                #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("application/json") == true, "\(response.headers)")
            }
            try await client.execute(uri: "/events", method: .head, headers: [.accept: "text/event-stream;q=0.5"]) { response in
                #expect(response.headers[.contentType]?.hasPrefix("text/event-stream") == true)
                #expect(response.headers[.vary] == "Accept, Authorization, Last-Event-ID")
            }
        }
    }

    @Test("OPTIONS answers 204 with the resource's Allow (for `*`, the server's: every method a resource takes), and Accept-Patch where it takes PATCH; an unknown path is 404")
    func options() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements/1", method: .options) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.allow] == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
                #expect(response.headers[.acceptPatch] == "application/merge-patch+json, application/json")
            }
            try await client.execute(uri: "/health", method: .options) { response in
                #expect(response.headers[.allow] == "GET, HEAD, OPTIONS" && response.headers[.acceptPatch] == nil)
            }
            try await client.execute(uri: "/nothing", method: .options) { #expect($0.status == .notFound) }
            try await client.execute(uri: "*", method: .options) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.allow] == "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
            }
            try await client.execute(uri: "*", method: .get) { #expect($0.status == .notFound) }
        }
    }

    @Test("a 404 names the route a near miss was probably meant to be, its parameters kept; a path like no route's gets none", arguments: [
        ("/announcement", "no such resource: GET /announcement (did you mean /announcements?)"),
        ("/Announcements/3", "no such resource: GET /Announcements/3 (did you mean /announcements/3?)"),
        ("/announcments/3/history", "no such resource: GET /announcments/3/history (did you mean /announcements/3/history?)"),
        ("/helth", "no such resource: GET /helth (did you mean /health?)"),
        ("/nothing", "no such resource: GET /nothing"),
        ("/announcements/1/2/3", "no such resource: GET /announcements/1/2/3"),
    ])
    func nearMiss(path: String, message: String) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.object["message"] as? String == message, "\(response.object)")
            }
        }
    }

    // MARK: - CORS

    static let listed = "https://intranet.example.com"

    @Test("without cors_origins, no response carries CORS headers")
    func corsOff() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements", method: .get, headers: [.origin: Self.listed]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            try await client.execute(uri: "/announcements", method: .options, headers: [.origin: Self.listed, .accessControlRequestMethod: "POST"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
                #expect(response.headers[.accessControlAllowMethods] == nil)
            }
        }
    }

    @Test("a listed origin may read and write (with Authorization), never with credentials; others get nothing")
    func corsListed() async throws {
        try await withServer(configure: { $0.cors = CORSPolicy(origins: [Self.listed]) }) { client, _ in
            let preflight: HTTPFields = [.origin: Self.listed, .accessControlRequestMethod: "PATCH", .accessControlRequestHeaders: "authorization, content-type"]
            try await client.execute(uri: "/announcements/1", method: .options, headers: preflight) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[.accessControlAllowOrigin] == Self.listed)
                #expect(response.headers[.accessControlAllowMethods]?.contains("PATCH") == true)
                #expect(response.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
                #expect(response.headers[.accessControlAllowCredentials] == nil)
                #expect(response.headers[.vary] == "Origin")
            }
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.origin: Self.listed]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == Self.listed)
                #expect(response.headers[.accessControlExposeHeaders]?.contains("ETag") == true)
                #expect(response.headers[.accessControlExposeHeaders]?.contains("WWW-Authenticate") == true, "a page tells a missing token from one refused")
                #expect(response.headers[.accessControlExposeHeaders]?.contains("Idempotency-Key") == true, "a page reads the key a node made for its write")
                #expect(response.headers[values: .vary].contains("Origin"))
                #expect(response.headers[.accessControlAllowCredentials] == nil)
            }
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.origin: "https://evil.example"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            try await client.execute(uri: "/announcements/1", method: .get) { response in
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            try await client.execute(uri: "/announcements/1", method: .options, headers: [.origin: "https://evil.example", .accessControlRequestMethod: "DELETE"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    @Test("with *, any page may read, but no page may write")
    func corsAnyReads() async throws {
        try await withServer(configure: { $0.cors = CORSPolicy(origins: ["*"]) }) { client, _ in
            try await client.execute(uri: "/announcements", method: .get, headers: [.origin: "https://any.example"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "*")
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            // Without an Origin there are no CORS headers: a shared cache must not hand this copy to a page.
            try await client.execute(uri: "/announcements", method: .get) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
                #expect(response.headers[values: .vary].contains("Origin"))
            }
            try await client.execute(uri: "/announcements", method: .options, headers: [.origin: "https://any.example", .accessControlRequestMethod: "GET"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == "*")
                #expect(response.headers[.accessControlAllowMethods] == "GET, HEAD")
                #expect(response.headers[.accessControlAllowHeaders]?.contains("Authorization") == false)
            }
            try await client.execute(uri: "/announcements", method: .options, headers: [.origin: "https://any.example", .accessControlRequestMethod: "POST"]) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
            var write = alice
            write[.origin] = "https://any.example"
            try await client.execute(uri: "/announcements", method: .post, headers: write, body: body(#"{"title":"x"}"#)) { response in
                #expect(response.headers[.accessControlAllowOrigin] == nil)
            }
        }
    }

    // MARK: - Request bodies and headers

    @Test("Content-Type is parsed: only application/json (in UTF-8) is JSON", arguments: [
        ("application/jsonfoo", HTTPResponse.Status.unsupportedMediaType),
        ("application/json-patch", .unsupportedMediaType),
        ("application/json; charset=latin1", .unsupportedMediaType),
        ("text/plain", .unsupportedMediaType),
        ("application/json", .created),
        ("Application/JSON ; charset=\"UTF-8\"", .created),
    ])
    func contentType(type: String, status: HTTPResponse.Status) async throws {
        try await withServer { client, _ in
            var headers = alice
            headers[.contentType] = type
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"x"}"#)) { response in
                #expect(response.status == status, "\(type)")
            }
        }
    }

    @Test("a request body naming a field twice is a 400 naming it, and appends nothing", arguments: [
        #"{"title":"a","title":"b"}"#,
        #"{"title":"a","body":"x","t\u0069tle":"b"}"#,
    ])
    func repeatedField(json: String) async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(json)) { response in
                #expect(response.status == .badRequest)
                #expect(response.object["message"] as? String == "field `title` appears twice in the request body: send each field once")
            }
            #expect(store.snapshot.seq == 6)
        }
    }

    @Test("an empty Idempotency-Key, or two of them, is a 400")
    func emptyKey() async throws {
        try await withServer { client, store in
            var empty = alice
            empty[.idempotencyKey] = ""
            try await client.execute(uri: "/announcements", method: .post, headers: empty, body: body(#"{"title":"x"}"#)) { response in
                #expect(response.status == .badRequest)
            }
            var twice = alice
            twice.append(HTTPField(name: .idempotencyKey, value: "a"))
            twice.append(HTTPField(name: .idempotencyKey, value: "b"))
            try await client.execute(uri: "/announcements", method: .post, headers: twice, body: body(#"{"title":"x"}"#)) { response in
                #expect(response.status == .badRequest)
            }
            #expect(store.snapshot.seq == 6)
        }
    }

    @Test("X-Request-ID is kept only as 1 to 128 visible ASCII characters", arguments: [
        ("abc-123", true), ("x writer=admin", false), (String(repeating: "a", count: 129), false), ("tab\there", false),
    ])
    func requestID(id: String, kept: Bool) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/health", method: .get, headers: [.requestID: id]) { response in
                let echoed = try #require(response.headers[.requestID])
                #expect((echoed == id) == kept)
                #expect(echoed.utf8.allSatisfy { (0x21...0x7E).contains($0) })
            }
        }
    }

    @Test("every answer says nosniff and carries the API's Content-Security-Policy: reads, errors, 304s, writes, streams", arguments: [
        ("/announcements", HTTPRequest.Method.get), ("/announcements/99", .get), ("/announcements?bogus=%3Cscript%3E", .get), ("/health", .get),
        ("/openapi.yaml", .get), ("/events", .get), ("/announcements", .post), ("/nothing", .delete),
    ])
    func securityHeaders(path: String, method: HTTPRequest.Method) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: path, method: method, headers: method == .post ? alice : [:], body: method == .post ? body(#"{"title":"New"}"#) : nil) { response in
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(path)")
                #expect(response.headers[.contentSecurityPolicy] == "default-src 'none'; frame-ancestors 'none'", "\(path)")
                if method == .get, let etag = response.headers[.eTag] {
                    try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag]) { notModified in
                        #expect(notModified.status == .notModified)
                        #expect(notModified.headers[.xContentTypeOptions] == "nosniff")
                    }
                }
            }
        }
    }

    @Test("the access log quotes the path, so a request cannot forge a field or a line")
    func accessLogQuotes() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test", factory: { _ in lines })
        try await withServer(logger: logger) { client, _ in
            try await client.execute(uri: "/announcements/%22%20x=1", method: .get) { #expect($0.status == .notFound) }
        }
        let line = try #require(lines.messages.first { $0.hasPrefix("GET ") })
        #expect(line.hasPrefix(#"GET "/announcements/%22%20x=1" 404 "#), "\(line)")
        #expect(VisibleText.quoted("a\"b\u{1B}[2K\nc") == #""a\"b\u001b[2K\nc""#)
    }

    @Test("the access log keeps the values of the parameters a route takes, and writes any other's as ***: a token in the URL stays out of it")
    func accessLogRedactsQuery() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test", factory: { _ in lines })
        try await withServer(logger: logger) { client, _ in
            try await client.execute(uri: "/announcements?access_token=s3cret-token&max=2", method: .get) { #expect($0.status == .badRequest) }
            try await client.execute(uri: "/announcements?max=2&offset=1", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/nothing?token=s3cret-token&s3cret-bare", method: .get) { #expect($0.status == .notFound) }
        }
        let requests = lines.messages.filter { $0.hasPrefix("GET ") }
        #expect(requests.count == 3)
        #expect(requests.contains { $0.hasPrefix(#"GET "/announcements?access_token=***&max=2" 400 "#) }, "\(requests)")
        #expect(requests.contains { $0.hasPrefix(#"GET "/announcements?max=2&offset=1" 200 "#) }, "\(requests)")
        #expect(requests.contains { $0.hasPrefix(#"GET "/nothing?token=***&***" 404 "#) }, "\(requests)")
        #expect(!lines.messages.contains { $0.contains("s3cret") })
    }
}

/// A log handler that keeps every message and its fields, for tests that read the log.
final class LogLines: LogHandler, Sendable {
    private let kept = Mutex<[(message: String, fields: [String: String])]>([])
    var messages: [String] { kept.withLock { $0.map(\.message) } }
    /// Each line's fields, by the line's message.
    var lines: [(message: String, fields: [String: String])] { kept.withLock { $0 } }

    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).mapValues(\.description)
        kept.withLock { $0.append((event.message.description, fields)) }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
}
