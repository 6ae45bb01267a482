@testable import AnnouncementsConfig
import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@testable import AnnouncementsHTTP

/// Each operation the document describes: its method and path, its `operationId`, whether it has
/// tags, and the names of its query parameters.
private func documentedOperations() throws -> [(route: String, id: String?, hasTags: Bool, query: Set<String>)] {
    guard case .mapping(let root, _)? = try YAMLParser.parse(OpenAPIDocument.yaml) else { throw CocoaError(.fileReadCorruptFile) }
    func value(_ pairs: [(key: YAMLNode, value: YAMLNode)], _ name: String) -> YAMLNode? {
        pairs.first { if case .scalar(name, _, _) = $0.key { true } else { false } }?.value
    }
    guard case .mapping(let paths, _)? = value(root, "paths"),
          case .mapping(let components, _)? = value(root, "components"),
          case .mapping(let parameters, _)? = value(components, "parameters")
    else { throw CocoaError(.fileReadCorruptFile) }
    /// The name of a query parameter, given inline or as a reference to components/parameters.
    func queryName(_ parameter: YAMLNode) -> String? {
        guard case .mapping(var fields, _) = parameter else { return nil }
        if case .scalar(let reference, _, _)? = value(fields, "$ref"),
           case .mapping(let referenced, _)? = value(parameters, String(reference.split(separator: "/").last ?? "")) {
            fields = referenced
        }
        guard case .scalar("query", _, _)? = value(fields, "in"), case .scalar(let name, _, _)? = value(fields, "name") else { return nil }
        return name
    }
    var found: [(route: String, id: String?, hasTags: Bool, query: Set<String>)] = []
    for (key, item) in paths {
        guard case .scalar(let path, _, _) = key, case .mapping(let operations, _) = item else { continue }
        // Every path item stands whole in `paths`: generators that do not follow a path item's
        // `$ref` (openapi-python-client) would leave its operations out.
        guard value(operations, "$ref") == nil else { throw OpenAPIProblem.referencedPathItem(path) }
        for (method, operation) in operations {
            guard case .scalar(let name, _, _) = method, ["get", "put", "post", "patch", "delete"].contains(name),
                  case .mapping(let fields, _) = operation else { continue }
            var id: String?
            if case .scalar(let text, _, _)? = value(fields, "operationId") { id = text }
            var hasTags = false
            if case .sequence(let tags, _)? = value(fields, "tags") { hasTags = !tags.isEmpty }
            var query = Set<String>()
            if case .sequence(let list, _)? = value(fields, "parameters") { query = Set(list.compactMap(queryName)) }
            found.append(("\(name.uppercased()) \(path)", id, hasTags, query))
        }
    }
    return found
}

enum OpenAPIProblem: Error {
    case referencedPathItem(String)
}

/// The (method, path) pairs the document describes.
private func documentedRoutes() throws -> Set<String> {
    Set(try documentedOperations().map(\.route))
}

@Suite struct OpenAPITests {
    @Test("every answer the document gives as application/xml it gives as text/xml too: the server sends either, as Accept asks")
    func xmlTypesTogether() {
        let document = OpenAPIDocument.yaml
        let xml = document.components(separatedBy: "application/xml: { schema: { type: string } }").count - 1
        let textXML = document.components(separatedBy: "text/xml: { schema: { type: string } }").count - 1
        #expect(xml > 10 && xml == textXML, "application/xml \(xml) times, text/xml \(textXML)")
    }

    @Test("every route of the API is in the OpenAPI document, and the document describes no route the server lacks")
    func everyRouteDocumented() async throws {
        let folder = NSTemporaryDirectory() + "openapi-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try await EventStore.open(path: folder + "/log.jsonl", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        // As `serve` builds it: with /metrics.
        let router = buildRouter(store: store, settings: ServerSettings(
            host: "127.0.0.1", port: 0, access: Access([]), maxRequestBytes: 4096, metricsEndpoint: MetricsEndpoint(render: { [] })
        ))
        // The web client's pages are for browsers, not the API: the document leaves them out.
        let paths = router.routes.map { (method: $0.method.rawValue, path: ($0.path.description.hasPrefix("/") ? "" : "/") + $0.path.description) }
        let served = Set(paths.filter { !WebRoutes.serves($0.path) }.map { "\($0.method) \($0.path)" })
        await store.close()
        let documented = try documentedRoutes()
        #expect(served.count > 20, "the router lists its routes: \(served.sorted())")
        // A HEAD route of its own (the event stream's) answers what its GET does, as every HEAD.
        let undocumented = served.filter { route in
            !documented.contains(route) && !(route.hasPrefix("HEAD ") && documented.contains("GET " + route.dropFirst("HEAD ".count)))
        }
        #expect(undocumented.sorted() == [], "routes the document does not describe")
        #expect(documented.subtracting(served).sorted() == [], "documented routes the server does not have")
    }

    @Test("every operation has a readable operationId of its own and tags, so that a generated client names its methods")
    func operationIds() throws {
        let operations = try documentedOperations()
        #expect(operations.count > 20)
        for operation in operations {
            #expect(operation.id?.wholeMatch(of: /[a-z][A-Za-z0-9]*/) != nil, "\(operation.route) has no operationId (or not a readable one)")
            #expect(operation.hasTags, "\(operation.route) has no tags")
        }
        let ids = operations.compactMap(\.id)
        #expect(Set(ids).count == ids.count, "operationIds are unique: \(ids.sorted())")
        #expect(ids.contains("getAnnouncementV1") && ids.contains("updateAnnouncement") && ids.contains("createAnnouncementV2"))
    }

    @Test("the query parameters each route takes (what QueryMiddleware lets through) are the ones the document gives it")
    func queryParameters() throws {
        let operations = try documentedOperations()
        #expect(operations.contains { !$0.query.isEmpty }, "the document has query parameters at all")
        for operation in operations {
            let parts = operation.route.split(separator: " ", maxSplits: 1)
            let taken = QueryMiddleware<AnnouncementsRequestContext>.parameters(route: String(parts[1]), method: HTTPRequest.Method(String(parts[0]))!)
            #expect(Set(taken) == operation.query, "\(operation.route)")
        }
    }

    @Test("GET /openapi.yaml serves the document, parsed as YAML, an OpenAPI 3.1 one")
    func served() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/openapi.yaml", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/yaml")
                let text = String(buffer: response.body)
                #expect(text == OpenAPIDocument.yaml)
                #expect(text.hasPrefix("openapi: 3.1.0\n"))
            }
        }
    }

    @Test("GET /openapi.yaml is revalidated by caches (no-cache) with an ETag of its own for each coding: 304 while the document is the same")
    func servedWithValidator() async throws {
        try await withServer { client, _ in
            for coding in [nil, "gzip"] as [String?] {
                var headers: HTTPFields = [:]
                if let coding { headers[.acceptEncoding] = coding }
                let etag = try await client.execute(uri: "/openapi.yaml", method: .get, headers: headers) { response in
                    #expect(response.headers[.cacheControl] == "no-cache")
                    #expect(response.headers[.contentEncoding] == coding)
                    return try #require(response.headers[.eTag])
                }
                #expect(etag.hasPrefix("\"openapi-") && etag.hasSuffix(coding.map { "-\($0)\"" } ?? "\""), "\(etag)")
                headers[.ifNoneMatch] = etag
                try await client.execute(uri: "/openapi.yaml", method: .get, headers: headers) { response in
                    #expect(response.status == .notModified)
                    #expect(response.body.readableBytes == 0)
                    #expect(response.headers[.eTag] == etag)
                }
            }
        }
    }
}
