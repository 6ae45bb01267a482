import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// Who may do what, route by route: the role table (`Permission.roles`) as the API applies it.
@Suite struct AccessAPITests {
    /// Who sends a request: no token, a token of each role (see `testTokens`), or a token that is
    /// not configured.
    enum Caller: String, CaseIterable, CustomStringConvertible {
        case nobody, author, editor, auditor, admin, stranger

        var headers: HTTPFields {
            var headers: HTTPFields = [.contentType: "application/json"]
            switch self {
            case .nobody: break
            case .author: headers[.authorization] = "Bearer arthur-secret"
            case .editor: headers[.authorization] = "Bearer alice-secret"
            case .auditor: headers[.authorization] = "Bearer audrey-secret"
            case .admin: headers[.authorization] = "Bearer ada-secret"
            case .stranger: headers[.authorization] = "Bearer not-a-configured-token"
            }
            return headers
        }

        var description: String { rawValue }
    }

    /// One request, and the status each caller gets. Announcements 1 to 6 are the seed's; 7 and 8
    /// are the author's (`arthur`), made before the requests. Rows run in order on one server per
    /// caller, so a row may change what a later one sees: each row names an announcement no
    /// earlier row deletes.
    struct Row: CustomStringConvertible, Sendable {
        var method: HTTPRequest.Method
        var uri: String
        var body: String?
        /// By caller: nobody, author, editor, auditor, admin, stranger.
        var statuses: [Int]

        var description: String { "\(method) \(uri)" }

        func status(for caller: Caller) -> Int {
            statuses[Caller.allCases.firstIndex(of: caller) ?? 0]
        }
    }

    static let rows: [Row] = [
        //                                                                         nobody author editor auditor admin stranger
        Row(method: .get, uri: "/announcements", statuses: /*                   */ [200, 200, 200, 200, 200, 401]),
        Row(method: .get, uri: "/v1/announcements/1", statuses: /*              */ [200, 200, 200, 200, 200, 401]),
        Row(method: .get, uri: "/announcements/1/history", statuses: /*         */ [401, 403, 403, 200, 200, 401]),
        Row(method: .get, uri: "/announcements/1?asOf=1", statuses: /*          */ [401, 403, 403, 200, 200, 401]),
        Row(method: .get, uri: "/announcements?asOf=1", statuses: /*            */ [401, 403, 403, 200, 200, 401]),
        Row(method: .get, uri: "/events", statuses: /*                          */ [200, 200, 200, 200, 200, 401]),
        Row(method: .get, uri: "/health", statuses: /*                          */ [200, 200, 200, 200, 200, 200]),
        Row(method: .post, uri: "/announcements", body: #"{"title":"New"}"#, statuses: [401, 201, 201, 403, 201, 401]),
        Row(method: .patch, uri: "/announcements/7", body: #"{"title":"Own, edited"}"#, statuses: [401, 200, 200, 403, 200, 401]),
        Row(method: .put, uri: "/announcements/7", body: #"{"title":"Own, replaced"}"#, statuses: [401, 200, 200, 403, 200, 401]),
        Row(method: .patch, uri: "/announcements/1", body: #"{"title":"Another's, edited"}"#, statuses: [401, 403, 200, 403, 200, 401]),
        Row(method: .put, uri: "/announcements/1", body: #"{"title":"Another's, replaced"}"#, statuses: [401, 403, 200, 403, 200, 401]),
        Row(method: .delete, uri: "/announcements/8", statuses: /*              */ [401, 204, 204, 403, 204, 401]),
        Row(method: .delete, uri: "/announcements/2", statuses: /*              */ [401, 403, 204, 403, 204, 401]),
        Row(method: .post, uri: "/announcements/3/erase", body: #"{"reason":"posted to the wrong audience"}"#, statuses: [401, 403, 403, 403, 200, 401]),
    ]

    @Test("every caller against every route: the status its role gives, and nothing appended on a refusal", arguments: Caller.allCases)
    func roleTable(caller: Caller) async throws {
        try await withServer { client, store in
            for title in ["Arthur's first", "Arthur's second"] {
                _ = try await store.create(AnnouncementDraft(title: title), by: "arthur")
            }
            for row in Self.rows {
                let before = store.lastSeq
                let status = try await client.execute(
                    uri: row.uri, method: row.method, headers: caller.headers, body: row.body.map { ByteBuffer(string: $0) }
                ) { $0.status.code }
                #expect(status == row.status(for: caller), "\(caller): \(row)")
                let appended = store.lastSeq - before
                if status >= 400 || row.method == .get {
                    #expect(appended == 0, "\(caller): \(row) appended \(appended) events")
                } else {
                    #expect(appended == 1, "\(caller): \(row) appended \(appended) events, not 1")
                }
            }
        }
    }

    @Test("a 403 says which roles may and which role the token has; an author's refusal does not name the creator; events keep the token's name")
    func forbiddenSaysWhy() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements/1", method: .patch, headers: Caller.author.headers, body: body(#"{"title":"Mine now"}"#)) { response in
                #expect(response.status == .forbidden)
                #expect(response.object["needs"] as? [String] == ["editor", "admin"])
                #expect(response.object["role"] as? String == "author")
                #expect(response.object["message"] as? String == "forbidden: announcement 1 was created by another token, and an author edits and deletes only what it created; this needs role editor or admin")
                #expect(response.headers[.wwwAuthenticate] == #"Bearer error="insufficient_scope""#, "the author's token will not do")
            }
            try await client.execute(uri: "/announcements", method: .post, headers: Caller.auditor.headers, body: body(#"{"title":"Audited"}"#)) { response in
                #expect(response.status == .forbidden)
                #expect(response.object["needs"] as? [String] == ["author", "editor", "admin"])
                #expect(response.object["role"] as? String == "auditor")
                #expect((response.object["message"] as? String)?.hasPrefix("forbidden: the token of `audrey` has role auditor; this needs role author, editor or admin") == true)
            }
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: Caller.editor.headers) { response in
                #expect(response.status == .forbidden)
                #expect(response.object["needs"] as? [String] == ["auditor", "admin"])
            }
            try await client.execute(uri: "/announcements/1/history", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
                #expect(response.object["message"] as? String == "this needs a token of role auditor or admin: send Authorization: Bearer <token>")
            }
            // The author's own: created, edited and deleted under its name.
            let created = try await client.execute(uri: "/announcements", method: .post, headers: Caller.author.headers, body: body(#"{"title":"By an author"}"#)) { $0.object["id"] as? Int }
            let id = try #require(created)
            try await client.execute(uri: "/announcements/\(id)", method: .delete, headers: Caller.author.headers) { #expect($0.status == .noContent) }
            let history = try #require(try await store.history(id: id))
            #expect(history.map(\.event.by) == ["arthur", "arthur"])
        }
    }

    @Test("a refusal's WWW-Authenticate says, as RFC 6750 does, whether no token came or which way the one sent will not do; its access-log line says the same")
    func challenges() async throws {
        let lines = LogLines()
        let logger = Logger(label: "test", factory: { _ in lines })
        let cases: [(authorization: String?, uri: String, status: HTTPResponse.Status, challenge: String, logged: String)] = [
            (nil, "/announcements/1/history", .unauthorized, "Bearer", "no_token"),
            ("Basic YWxpY2U6c2VjcmV0", "/announcements/1/history", .unauthorized, "Bearer", "other_scheme"),
            ("Bearer ", "/announcements/1/history", .badRequest, #"Bearer error="invalid_request""#, "invalid_request"),
            ("Bearer\tfoo", "/announcements/1/history", .badRequest, #"Bearer error="invalid_request""#, "invalid_request"),
            ("Bearerfoo", "/announcements/1/history", .badRequest, #"Bearer error="invalid_request""#, "invalid_request"),
            ("Bearer not-a-configured-token", "/announcements", .unauthorized, #"Bearer error="invalid_token""#, "invalid_token"),
            ("Bearer alice-secret", "/announcements/1/history", .forbidden, #"Bearer error="insufficient_scope""#, "insufficient_scope"),
        ]
        try await withServer(logger: logger) { client, _ in
            for (index, each) in cases.enumerated() {
                var headers: HTTPFields = [.requestID: "challenge-\(index)"]
                if let authorization = each.authorization { headers[.authorization] = authorization }
                try await client.execute(uri: each.uri, method: .get, headers: headers) { response in
                    #expect(response.status == each.status, "\(each)")
                    #expect(response.headers[.wwwAuthenticate] == each.challenge, "\(each)")
                }
            }
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: [.authorization: "Bearer audrey-secret", .requestID: "granted"]) { #expect($0.status == .ok) }
            var twice: HTTPFields = [.authorization: "Bearer audrey-secret"]
            twice.append(HTTPField(name: .authorization, value: "Bearer ada-secret"))
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: twice) { response in
                #expect(response.status == .badRequest && response.headers[.wwwAuthenticate] == #"Bearer error="invalid_request""#)
                #expect(response.object["message"] as? String == "send one Authorization header, not 2")
            }
        }
        // A role no configured token has: the token will not do either.
        try await withServer(tokens: [("alice", "alice-secret", .editor)]) { client, _ in
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: [.authorization: "Bearer alice-secret"]) { response in
                #expect(response.status == .forbidden && response.headers[.wwwAuthenticate] == #"Bearer error="insufficient_scope""#)
                #expect((response.object["message"] as? String)?.hasPrefix("no configured token has role auditor or admin") == true)
            }
        }
        let access = lines.lines.filter { $0.fields["request.id"] != nil }
        for (index, each) in cases.enumerated() {
            let line = access.first { $0.fields["request.id"] == "challenge-\(index)" }
            #expect(line?.fields["auth.error"] == each.logged, "\(each): \(String(describing: line))")
        }
        let granted = access.first { $0.fields["request.id"] == "granted" }
        #expect(granted != nil && granted?.fields["auth.error"] == nil, "an answer without a challenge says nothing of it: \(String(describing: granted))")
        #expect(!lines.messages.joined().contains("not-a-configured-token") && !access.contains { $0.fields.values.contains { $0.contains("secret") } }, "no token is logged")
    }

    @Test("reads: token: every read needs a token of any role (401 without one); /health and the API document stay open")
    func readsNeedAToken() async throws {
        try await withServer(reads: .token) { client, _ in
            for uri in ["/announcements", "/v2/announcements", "/announcements/1", "/events", "/events?after=3"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .unauthorized, "\(uri)")
                    #expect(response.headers[.wwwAuthenticate] == "Bearer", "\(uri)")
                }
                for caller in [Caller.author, .editor, .auditor, .admin] {
                    try await client.execute(uri: uri, method: .get, headers: caller.headers) { #expect($0.status == .ok, "\(caller): \(uri)") }
                }
                try await client.execute(uri: uri, method: .get, headers: Caller.stranger.headers) { #expect($0.status == .unauthorized, "\(uri)") }
            }
            for uri in ["/health", "/openapi.yaml"] {
                try await client.execute(uri: uri, method: .get) { #expect($0.status == .ok, "\(uri)") }
            }
        }
    }

    @Test("the public feed carries seq, type, id and at only: no text, no writer, no key; an auditor gets the stored lines; it varies by Authorization")
    func publicFeed() async throws {
        try await withServer { client, store in
            var headers = Caller.editor.headers
            headers[.idempotencyKey] = "key-that-stays-private"
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"body":"<p>Secret detail</p>"}"#)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements/1", method: .delete, headers: Caller.editor.headers) { #expect($0.status == .noContent) }
            let stored = try storedLines(store)
            for caller in [Caller.nobody, .author, .editor] {
                try await client.execute(uri: "/events?limit=1000", method: .get, headers: caller.headers) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.vary]?.contains("Authorization") == true)
                    #expect(response.objects.count == stored.count)
                    for (offset, event) in response.objects.enumerated() {
                        #expect(Set(event.keys) == ["seq", "type", "id", "at"], "\(caller)")
                        #expect(event["seq"] as? Int == offset + 1)
                    }
                    let text = String(buffer: response.body)
                    for secret in ["Grails", "Body of", "Secret detail", "seed", "alice", "key-that-stays-private", "prev"] {
                        #expect(!text.contains(secret), "\(caller): the public feed holds \(secret)")
                    }
                    #expect(response.objects.suffix(2).map { $0["type"] as? String } == ["edited", "deleted"])
                }
            }
            for caller in [Caller.auditor, .admin] {
                try await client.execute(uri: "/events?limit=1000", method: .get, headers: caller.headers) { response in
                    #expect(String(buffer: response.body) == "[" + stored.joined(separator: ",") + "]", "\(caller)")
                }
            }
        }
    }

    @Test("Event.publicLine: a stored line's beginning, closed; a line laid out otherwise is parsed; not an event is nil")
    func publicLine() throws {
        let stored = #"{"seq":12,"type":"edited","id":3,"at":"2026-11-21T09:30:00.000Z","by":"alice","key":"k","data":{"title":"T"},"prev":"ab"}"#
        #expect(Event.publicLine(ofStored: Array(stored.utf8)[...]).map { String(decoding: $0, as: UTF8.self) } == #"{"seq":12,"type":"edited","id":3,"at":"2026-11-21T09:30:00.000Z"}"#)
        let handMade = #"{"by":"bob","id":3,"type":"deleted","seq":13,"at":"2026-11-21T09:31:00.000Z"}"#
        #expect(Event.publicLine(ofStored: Array(handMade.utf8)[...]).map { String(decoding: $0, as: UTF8.self) } == #"{"seq":13,"type":"deleted","id":3,"at":"2026-11-21T09:31:00.000Z"}"#)
        #expect(Event.publicLine(ofStored: Array(#"{"seq":1}"#.utf8)[...]) == nil)
    }

    @Test("the role table: who may do what")
    func roleTableInTheDomain() {
        #expect(Permission.create.roles == [.author, .editor, .admin])
        #expect(Permission.changeOwn.roles == [.author, .editor, .admin])
        #expect(Permission.changeAny.roles == [.editor, .admin])
        #expect(Permission.audit.roles == [.auditor, .admin])
        #expect(Permission.erase.roles == [.admin])
        #expect(Permission.read.roles == Role.allCases)
        #expect(Role.allCases.filter { $0.may(.changeAny) } == [.editor, .admin])
        #expect(WriteScope(.author) == .own && WriteScope(.editor) == .any && WriteScope(.admin) == .any)
    }
}
