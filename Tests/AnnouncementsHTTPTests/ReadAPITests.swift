import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import NIOCore
import NIOFoundationCompat
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import AnnouncementsHTTP

/// A store in a fresh folder, seeded like the original backend, and a live server on port 0.
func withServer(
    seed: [AnnouncementDraft] = reference,
    tokens: [(name: String, token: String?, role: Role)] = testTokens,
    reads: ReadAccess = .public,
    folder: String? = nil,
    logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
    configure: (inout ServerSettings) -> Void = { _ in },
    _ test: @Sendable (any TestClientProtocol, EventStore) async throws -> Void
) async throws {
    let path = folder ?? NSTemporaryDirectory() + "http-test-\(UUID().uuidString)"
    defer { if folder == nil { try? FileManager.default.removeItem(atPath: path) } }
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let store = try await EventStore.open(path: path + "/log.jsonl", seed: seed, logger: quiet)
    var settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access(tokens, reads: reads), maxRequestBytes: 4096)
    configure(&settings)
    let app = buildApplication(store: store, settings: settings, logger: logger)
    try await app.test(.live) { client in try await test(client, store) }
    await store.close()
}

/// The tokens a test server takes by default: two editors, one disabled, an auditor, an author and an admin.
let testTokens: [(name: String, token: String?, role: Role)] = [
    ("alice", "alice-secret", .editor), ("bob", "bob-secret", .editor), ("carol", nil, .editor),
    ("audrey", "audrey-secret", .auditor), ("arthur", "arthur-secret", .author), ("ada", "ada-secret", .admin),
]

/// The `Authorization` header of the default auditor's token: history, past states and full events need it.
let auditor: HTTPFields = [.authorization: "Bearer audrey-secret"]

let reference = [
    "Grails Quickcast #1: Grails Interceptors", "Grails Quickcast #2: JSON Views",
    "Grails Quickcast #3: Multi-Project Builds", "Grails Quickcast #4: Angular Scaffolding",
    "Retrieving Runtime Config Values In Grails 3", "Developing Grails 3 Applications With IntelliJ IDEA",
].enumerated().map { AnnouncementDraft(title: $1, body: "<p>Body of announcement \($0 + 1) &amp; more</p>") }

extension TestResponse {
    var json: Any? { try? JSONSerialization.jsonObject(with: Data(buffer: body)) }
    var objects: [[String: Any]] { json as? [[String: Any]] ?? [] }
    var object: [String: Any] { json as? [String: Any] ?? [:] }
}

let acceptVersion = HTTPField.Name("Accept-Version")!

@Suite struct ReadAPITests {
    // MARK: - The original acceptance tests, against a live server

    @Test("GET /announcements/ with Accept-Version 1.0 lists full announcements")
    func originalV1List() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements/", method: .get, headers: [acceptVersion: "1.0"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(!response.objects.isEmpty)
                for element in response.objects {
                    #expect((element["id"] as? Int).map { $0 > 0 } == true)
                    #expect((element["title"] as? String)?.isEmpty == false)
                    #expect((element["body"] as? String)?.isEmpty == false)
                }
            }
        }
    }

    @Test("GET /announcements/ with Accept-Version 2.0 lists summaries without bodies")
    func originalV2List() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements/", method: .get, headers: [acceptVersion: "2.0"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.objects.count == 6)
                for element in response.objects {
                    #expect(element["id"] is Int)
                    #expect(element["title"] is String)
                    #expect(element["body"] == nil)
                }
            }
        }
    }

    @Test("a page of the list leaves out the announcements that would take it past 8 MiB (it holds one at least), and Link: next points at the first it left out")
    func pageByteLimit() async throws {
        try await withServer(seed: []) { client, store in
            let body = "<p>" + String(repeating: "a", count: (1 << 20) - 7) + "</p>"
            for number in 1...12 { _ = try await store.create(AnnouncementDraft(title: "Large \(number)", body: body), by: "alice") }
            try await client.execute(uri: "/v1/announcements?max=100", method: .get) { response in
                // Eight bodies of 1 MiB and their JSON pass 8 MiB: seven fit.
                #expect(response.objects.map { $0["id"] as? Int } == Array(1...7))
                #expect(response.body.readableBytes <= ReadRoutes.pageByteLimit && response.body.readableBytes > ReadRoutes.pageByteLimit - (1 << 20) - 100)
                #expect(response.headers[.totalCount] == "12")
                #expect(response.headers[.link] == #"</v1/announcements?offset=7&max=100&sort=id&order=asc>; rel="next""#)
            }
            try await client.execute(uri: "/v1/announcements?max=100", method: .get, headers: [.accept: "application/xml"]) { response in
                let xml = String(buffer: response.body)
                #expect(xml.contains("<announcement><id>7</id>") && !xml.contains("<announcement><id>8</id>"), "XML pages stop there too")
                #expect(xml.hasSuffix("</announcements>") && response.body.readableBytes <= ReadRoutes.pageByteLimit)
                #expect(response.headers[.link]?.contains("offset=7&") == true)
            }
            try await client.execute(uri: "/v1/announcements?offset=7&max=100", method: .get) { response in
                #expect(response.objects.map { $0["id"] as? Int } == Array(8...12))
                #expect(response.headers[.link]?.contains(#"rel="next""#) == false, "the end")
            }
            // Summaries are small: the page holds what it asks for.
            try await client.execute(uri: "/v2/announcements?max=100", method: .get) { response in
                #expect(response.objects.count == 12)
                #expect(response.headers[.link] == nil)
            }
        }
    }

    @Test("GET /announcements/2 gives the full announcement in every version", arguments: ["1.0", "2.0", "3.0"])
    func originalDetail(version: String) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements/2", method: .get, headers: [acceptVersion: version]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.object["id"] as? Int == 2)
                #expect(response.object["title"] as? String == "Grails Quickcast #2: JSON Views")
                #expect(response.object["body"] as? String == "<p>Body of announcement 2 &amp; more</p>")
                #expect(response.headers[HTTPField.Name("API-Version")!] == version)
            }
        }
    }

    // MARK: - Versions

    @Test("the version comes from the header, the path prefix, or the default (2.0)", arguments: [
        ("/announcements", "1.0", "1.0"),
        ("/announcements", "1", "1.0"),
        ("/announcements", "2", "2.0"),
        ("/announcements", nil as String?, "2.0"),
        ("/v1/announcements", nil, "1.0"),
        ("/v2/announcements", "1.0", "2.0"),
        ("/announcements", "3", "3.0"),
        ("/v3/announcements", "1.0", "3.0"),
    ] as [(String, String?, String)])
    func versions(path: String, header: String?, served: String) async throws {
        try await withServer { client, _ in
            var headers: HTTPFields = [:]
            if let header { headers[acceptVersion] = header }
            try await client.execute(uri: path, method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                #expect(response.headers[HTTPField.Name("API-Version")!] == served)
                #expect(response.headers[.vary] == "Accept-Version, Accept, Accept-Encoding")
                #expect((response.objects.first?["body"] != nil) == (served == "1.0"))
            }
        }
    }

    @Test("an unsupported version is 406 with the supported ones listed")
    func unsupportedVersion() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements", method: .get, headers: [acceptVersion: "4.0"]) { response in
                #expect(response.status == .notAcceptable)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.object["error"] as? Int == 406)
                #expect(response.object["supported"] as? [String] == ["1.0", "2.0", "3.0"])
                #expect(response.headers[.vary] == "Accept-Version, Accept", "an error varies by Accept too: it comes in the negotiated format")
                #expect((response.object["message"] as? String)?.contains("Accept-Version 4.0 is not supported") == true)
            }
        }
    }

    // MARK: - Paging, sorting, conditional requests

    @Test("pages with max and offset, with X-Total-Count and Link")
    func paging() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements?max=2&offset=2", method: .get) { response in
                #expect(response.objects.map { $0["id"] as? Int } == [3, 4])
                #expect(response.headers[HTTPField.Name("X-Total-Count")!] == "6")
                let link = response.headers[HTTPField.Name("Link")!] ?? ""
                #expect(link.contains(#"</announcements?offset=4&max=2&sort=id&order=asc>; rel="next""#))
                #expect(link.contains(#"</announcements?offset=0&max=2&sort=id&order=asc>; rel="prev""#))
            }
            // Links name the route's path, however the request spelled it: `//announcements` as a
            // link would be another host's.
            for (uri, path) in [("//announcements?max=2", "/announcements"), ("//v1//announcements?max=2", "/v1/announcements")] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[HTTPField.Name("Link")!] == "<\(path)?offset=2&max=2&sort=id&order=asc>; rel=\"next\"", "\(uri)")
                }
            }
            try await client.execute(uri: "/announcements?max=1000", method: .get) { response in
                #expect(response.objects.count == 6)
                #expect(response.headers[HTTPField.Name("Link")!] == nil)
            }
            try await client.execute(uri: "/announcements?sort=title&order=desc&max=3", method: .get) { response in
                #expect(response.objects.map { $0["title"] as? String } == [
                    "Retrieving Runtime Config Values In Grails 3", "Grails Quickcast #4: Angular Scaffolding",
                    "Grails Quickcast #3: Multi-Project Builds",
                ])
            }
        }
    }

    @Test("max is capped at 100")
    func maxCap() async throws {
        let many = (1...120).map { AnnouncementDraft(title: "Note \($0)") }
        try await withServer(seed: many) { client, _ in
            try await client.execute(uri: "/announcements?max=500", method: .get) { response in
                #expect(response.objects.count == 100)
                #expect(response.headers[HTTPField.Name("X-Total-Count")!] == "120")
            }
            try await client.execute(uri: "/announcements", method: .get) { response in
                #expect(response.objects.count == 10, "max defaults to 10")
            }
        }
    }

    @Test("bad query parameters are 400 naming the parameter", arguments: ["max=-1", "max=ten", "offset=-5", "sort=date", "order=up"])
    func badQuery(query: String) async throws {
        let name = String(query.prefix { $0 != "=" })
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements?\(query)", method: .get) { response in
                #expect(response.status == .badRequest)
                #expect(response.object["error"] as? Int == 400)
                #expect((response.object["message"] as? String)?.contains("`\(name)`") == true)
            }
        }
    }

    @Test("If-None-Match with the current ETag is 304 without a body; a write changes the ETag; every read is revalidated by caches (no-cache)")
    func conditional() async throws {
        try await withServer { client, store in
            let etag = try await client.execute(uri: "/announcements/1", method: .get) { response in
                #expect(response.headers[.cacheControl] == "no-cache")
                return response.headers[.eTag]
            }
            let listTag = try await client.execute(uri: "/announcements", method: .get) { response in
                #expect(response.headers[.cacheControl] == "no-cache")
                return response.headers[.eTag]
            }
            #expect(etag != nil && listTag != nil)
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.ifNoneMatch: etag ?? ""]) { response in
                #expect(response.status == .notModified)
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.cacheControl] == "no-cache")
            }
            try await client.execute(uri: "/announcements", method: .get, headers: [.ifNoneMatch: listTag ?? ""]) { response in
                #expect(response.status == .notModified)
            }
            _ = try await store.update(id: 1, AnnouncementPatch(title: "Changed"), by: "test")
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.ifNoneMatch: etag ?? ""]) { response in
                #expect(response.status == .ok)
                #expect(response.object["title"] as? String == "Changed")
                #expect(response.headers[.eTag] != etag)
            }
            try await client.execute(uri: "/announcements", method: .get, headers: [.ifNoneMatch: listTag ?? ""]) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("a read's If-Match is judged first: a 412 (an error naming the current ETag, kept by no cache) when it names no tag of the selected representation, strongly; the current tag, or *, reads; with If-None-Match too, its 304")
    func readIfMatch() async throws {
        try await withServer { client, store in
            let plainTag = try #require(try await client.execute(uri: "/announcements/1", method: .get) { $0.headers[.eTag] })
            let listTag = try #require(try await client.execute(uri: "/announcements", method: .get) { $0.headers[.eTag] })
            let historyTag = try #require(try await client.execute(uri: "/announcements/1/history", method: .get, headers: auditor) { $0.headers[.eTag] })
            for (uri, tag, headers) in [("/announcements/1", plainTag, [:]), ("/announcements", listTag, [:]), ("/announcements/1/history", historyTag, auditor)] as [(String, String, HTTPFields)] {
                for refused in [#""1-1-00000000""#, "W/\(tag)", "\"other\", W/\(tag)"] {
                    var asked = headers
                    asked[.ifMatch] = refused
                    try await client.execute(uri: uri, method: .get, headers: asked) { response in
                        #expect(response.status == .preconditionFailed, "\(uri) If-Match: \(refused)")
                        #expect(response.headers[.cacheControl] == "no-store", "\(uri)")
                        #expect((response.object["message"] as? String)?.contains("whose ETag is \(tag)") == true, "\(uri)")
                    }
                    asked[.ifNoneMatch] = tag
                    try await client.execute(uri: uri, method: .get, headers: asked) { #expect($0.status == .preconditionFailed, "\(uri): If-Match before If-None-Match") }
                }
                for matching in [tag, "*", "\"other\", \(tag)"] {
                    var asked = headers
                    asked[.ifMatch] = matching
                    try await client.execute(uri: uri, method: .get, headers: asked) { #expect($0.status == .ok, "\(uri) If-Match: \(matching)") }
                    asked[.ifNoneMatch] = tag
                    try await client.execute(uri: uri, method: .get, headers: asked) { #expect($0.status == .notModified, "\(uri)") }
                }
            }
            // A client that takes gzip, of a history too small to compress: its plain tag matches.
            var gzip = auditor
            gzip[.ifMatch] = historyTag
            gzip[.acceptEncoding] = "gzip"
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: gzip) { response in
                #expect(response.status == .ok && response.headers[.eTag] == historyTag)
            }
            // After a write, the tag read before is stale.
            _ = try await store.update(id: 1, AnnouncementPatch(title: "Changed"), by: "test")
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.ifMatch: plainTag]) { #expect($0.status == .preconditionFailed) }
        }
    }

    @Test("errors are kept by no cache (no-store): a proxy would go on answering a 404 for an announcement made since, or a 405")
    func errorsNotStored() async throws {
        try await withServer { client, _ in
            for (uri, method, status) in [("/announcements/99", HTTPRequest.Method.get, HTTPResponse.Status.notFound), ("/announcements", .delete, .methodNotAllowed), ("/announcements?max=x", .get, .badRequest)] {
                try await client.execute(uri: uri, method: method) { response in
                    #expect(response.status == status && response.headers[.cacheControl] == "no-store", "\(method) \(uri)")
                }
            }
        }
    }

    // MARK: - Representations

    @Test("Accept: application/xml gets the same resources as XML; an Accept that allows neither is 406")
    func xml() async throws {
        try await withServer { client, _ in
            let xml: HTTPFields = [.accept: "application/xml", acceptVersion: "1.0"]
            try await client.execute(uri: "/announcements?max=2", method: .get, headers: xml) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/xml;charset=UTF-8")
                let text = String(buffer: response.body)
                #expect(text.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?><announcements><announcement><id>1</id><title>Grails Quickcast #1: Grails Interceptors</title><body>&lt;p&gt;Body of announcement 1 &amp;amp; more&lt;/p&gt;</body></announcement>"#))
                #expect(text.hasSuffix("</announcements>"))
            }
            try await client.execute(uri: "/v2/announcements/2", method: .get, headers: [.accept: "text/xml"]) { response in
                #expect(response.headers[.contentType] == "text/xml;charset=UTF-8", "answered as asked")
                #expect(String(buffer: response.body).contains("<id>2</id>"))
            }
            try await client.execute(uri: "/announcements", method: .get, headers: [.accept: "application/json;q=0.9, application/xml"]) { response in
                #expect(response.headers[.contentType] == "application/xml;charset=UTF-8", "the client prefers XML")
            }
            try await client.execute(uri: "/announcements", method: .get, headers: [.accept: "text/html"]) { response in
                #expect(response.status == .notAcceptable)
                #expect(response.object["error"] as? Int == 406)
            }
        }
    }

    // MARK: - Errors and health

    @Test("a wrong method on a known resource is 405 with Allow")
    func methodNotAllowed() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD, POST, OPTIONS")
                #expect(response.object["error"] as? Int == 405)
            }
            try await client.execute(uri: "/v1/announcements/1", method: .post) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
            }
            // Every registered route is in the table: the audit routes and the document too.
            for path in ["/announcements/1/history", "/v2/announcements/1/history", "/events", "/openapi.yaml", "/health"] {
                try await client.execute(uri: path, method: .put) { response in
                    #expect(response.status == .methodNotAllowed, "\(path)")
                    #expect(response.headers[.allow] == "GET, HEAD, OPTIONS", "\(path)")
                }
            }
            try await client.execute(uri: "/announcements/1/history/2", method: .get) { #expect($0.status == .notFound) }
        }
    }


    @Test("unknown and deleted announcements and unknown routes are 404 with a JSON body")
    func notFound() async throws {
        try await withServer { client, store in
            try await store.delete(id: 3, by: "test")
            for uri in ["/announcements/3", "/announcements/99", "/announcements/abc", "/nothing/here"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound, "\(uri)")
                    #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                    #expect(response.object["error"] as? Int == 404)
                    #expect((response.object["message"] as? String)?.isEmpty == false)
                }
            }
        }
    }

    @Test("health reports the log position; every response carries a request id, echoed when sent, else made here and unique")
    func health() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/health", method: .get, headers: [HTTPField.Name("X-Request-ID")!: "abc-123"]) { response in
                #expect(response.status == .ok)
                #expect(response.object["status"] as? String == "ok")
                #expect(response.object["seq"] as? Int == 6)
                #expect(response.headers[HTTPField.Name("X-Request-ID")!] == "abc-123")
            }
            // Made here: this process's six-hex-digit prefix and a counter, unique per request.
            var made: [String] = []
            for _ in 0..<2 {
                try await client.execute(uri: "/health", method: .get) { response in
                    made.append(response.headers[HTTPField.Name("X-Request-ID")!] ?? "")
                }
            }
            #expect(made.allSatisfy { $0.wholeMatch(of: /[0-9a-f]{6}-[0-9a-f]+/) != nil }, "\(made)")
            #expect(made[0] != made[1] && made[0].prefix(7) == made[1].prefix(7), "\(made)")
        }
    }
}
