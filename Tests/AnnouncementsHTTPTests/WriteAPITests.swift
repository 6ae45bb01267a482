@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import Foundation
import Logging
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

let alice: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json"]

/// `alice`'s headers, with `field` set to `value`.
func alice(with field: HTTPField.Name, _ value: String) -> HTTPFields {
    var headers = alice
    headers[field] = value
    return headers
}

func body(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

@Suite struct WriteAPITests {
    @Test("POST creates: 201, Location, the announcement, and an event by the token's writer")
    func create() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"New","body":"<p>x</p>"}"#)) { response in
                #expect(response.status == .created)
                #expect(response.headers[.location] == "/announcements/7")
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.object["id"] as? Int == 7)
                #expect(response.object["title"] as? String == "New")
                #expect(response.object["body"] as? String == "<p>x</p>")
            }
            #expect(store.snapshot.seq == 7)
            var by: String?
            try LogReader(path: store.path).history(HistoryFilter(id: 7)) { by = $0.event.by }
            #expect(by == "alice")
            try await client.execute(uri: "/announcements/7", method: .get) { response in
                #expect(response.object["title"] as? String == "New")
            }
        }
    }

    @Test("PUT replaces, PATCH changes only the fields given, DELETE removes")
    func replaceUpdateDelete() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements/1", method: .put, headers: alice, body: body(#"{"title":"Replaced"}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.object["title"] as? String == "Replaced")
                #expect(response.object["body"] is NSNull, "PUT without a body clears it")
            }
            try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"body":"<p>new</p>"}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.object["title"] as? String == "Grails Quickcast #2: JSON Views")
                #expect(response.object["body"] as? String == "<p>new</p>")
            }
            try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"body":null}"#)) { response in
                #expect(response.object["body"] is NSNull)
            }
            try await client.execute(uri: "/announcements/3", method: .delete, headers: alice) { response in
                #expect(response.status == .noContent)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/announcements/3", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/announcements/3", method: .delete, headers: alice) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/announcements/99", method: .patch, headers: alice, body: body(#"{"title":"x"}"#)) { #expect($0.status == .notFound) }
            #expect(store.snapshot.seq == 10)
        }
    }

    @Test("writes need a configured bearer token; the 401 (or, for a malformed one, 400) says what is wrong with what was sent", arguments: [
        (nil, HTTPResponse.Status.unauthorized, "send Authorization: Bearer <token>"),
        ("Bearer wrong", .unauthorized, "not one of the configured tokens"),
        ("Basic YWxpY2U6c2VjcmV0", .unauthorized, "this server takes no other scheme"),
        ("Bearer", .badRequest, "Bearer needs a token after it"),
        ("Bearer ", .badRequest, "Bearer needs a token after it"),
        ("Bearerbob-secret", .badRequest, "Bearer needs a token after it"),
        ("Bearer  bob-secret", .created, ""),  // RFC 9110 11.4: one space or more
        ("Bearer \tbob-secret", .unauthorized, "not one of the configured tokens"),
        ("Bearer bob-secret2", .unauthorized, "not one of the configured tokens"),
        ("Bearer bob-secre", .unauthorized, "not one of the configured tokens"),
        ("Beárer bob-secret", .unauthorized, "this server takes no other scheme"),
        ("Bearer bob-secret", .created, ""),
        ("bearer bob-secret", .created, ""),
        ("BEARER bob-secret", .created, ""),
    ] as [(String?, HTTPResponse.Status, String)])
    func authentication(authorization: String?, status: HTTPResponse.Status, message: String) async throws {
        try await withServer { client, store in
            var headers: HTTPFields = [.contentType: "application/json"]
            if let authorization { headers[.authorization] = authorization }
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"T"}"#)) { response in
                #expect(response.status == status)
                if status != .created {
                    // RFC 6750's codes: a token sent that is not configured, one malformed (a 400); none sent.
                    let challenge = message.contains("configured tokens") ? #"Bearer error="invalid_token""# : message.contains("needs a token after it") ? #"Bearer error="invalid_request""# : "Bearer"
                    #expect(response.headers[.wwwAuthenticate] == challenge, "\(authorization ?? "none")")
                    #expect(response.object["error"] as? Int == Int(status.code))
                    #expect(store.snapshot.seq == 6)
                    #expect((response.object["message"] as? String)?.contains(message) == true, "\(response.object["message"] ?? "")")
                }
            }
        }
    }

    @Test("with no token enabled, writes are refused (a 401 that says nothing of the server's tokens), and reads still work")
    func readOnly() async throws {
        try await withServer(tokens: [("carol", nil, .editor)]) { client, _ in
            try await client.execute(uri: "/announcements", method: .post, headers: [.contentType: "application/json"], body: body(#"{"title":"T"}"#)) { response in
                #expect(response.status == .unauthorized)
                #expect((response.object["message"] as? String)?.contains("tokens") == false)
            }
            // A token that is not configured is a 401 first, here as anywhere.
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"T"}"#)) { #expect($0.status == .unauthorized) }
            try await client.execute(uri: "/announcements", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test("without a token, a 401 whether or not a configured token has the role: who may do what is not told to strangers; with one, the 403 says how to add the role")
    func rolesStayUnknownToStrangers() async throws {
        try await withServer(tokens: [("alice", "alice-secret", .editor)]) { client, _ in
            // No admin token is configured: erasing is allowed to no one.
            try await client.execute(uri: "/announcements/1/erase", method: .post, headers: [.contentType: "application/json"], body: body(#"{"reason":"r"}"#)) { response in
                #expect(response.status == .unauthorized)
                #expect((response.object["message"] as? String)?.contains("no configured token") == false)
            }
            try await client.execute(uri: "/announcements/1/erase", method: .post, headers: alice, body: body(#"{"reason":"r"}"#)) { response in
                #expect(response.status == .forbidden)
                #expect((response.object["message"] as? String)?.contains("no configured token has role admin") == true)
            }
        }
    }

    @Test("bad writes get their status and a JSON error, and append nothing", arguments: [
        ("application/json", #"{"title":"  "}"#, 422, "title"),
        ("application/json", #"{"body":"no title"}"#, 422, "title"),
        ("application/json", #"{"title":null,"body":"x"}"#, 422, "title must not be null"),
        ("application/json", #"{"title":"x"#, 400, "not valid JSON"),
        ("application/json", " ", 400, #"the request body is not valid JSON (invalid JSON at column 2: expected a value): send the announcement as a JSON object like {"title": "…", "body": "…"}"#),
        ("application/json", "", 400, "the request body is empty: send the announcement"),
        ("application/json", #"{"title":42}"#, 400, "`title`"),
        ("application/json", #"{"title":"x","body":5}"#, 400, "`body`"),
        ("application/json", #"{"title":"x","titel":"y"}"#, 400, "`titel`"),
        ("application/json", #"["title"]"#, 400, "JSON object"),
        ("text/plain", #"{"title":"x"}"#, 415, "Content-Type"),
        ("application/json", "<a body of 5,000 bytes>", 413, "larger than"),
    ] as [(String, String, Int, String)])
    func badWrites(contentType: String, text: String, status: Int, message: String) async throws {
        let text = text == "<a body of 5,000 bytes>" ? #"{"title":"x","body":""# + String(repeating: "a", count: 5000) + #""}"# : text
        try await withServer { client, store in
            let headers: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: contentType]
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(text)) { response in
                #expect(response.status.code == status)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.object["error"] as? Int == status)
                #expect((response.object["message"] as? String)?.contains(message) == true, "\(response.object)")
                if status == 422 {
                    let errors = response.object["errors"] as? [[String: Any]]
                    #expect(errors?.first?["field"] as? String == "title")
                }
            }
            #expect(store.snapshot.seq == 6)
        }
    }

    @Test("PATCH takes application/merge-patch+json (RFC 7396: a field left out stays, null clears the body); other writes do not")
    func mergePatch() async throws {
        try await withServer { client, store in
            let mergePatch: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/merge-patch+json"]
            try await client.execute(uri: "/announcements/1", method: .patch, headers: mergePatch, body: body(#"{"body":null}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.object["body"] is NSNull)
                #expect((response.object["title"] as? String)?.hasPrefix("Grails Quickcast #1") == true, "the title stays")
            }
            #expect(store.snapshot.seq == 7)
            try await client.execute(uri: "/announcements", method: .post, headers: mergePatch, body: body(#"{"title":"x"}"#)) { response in
                #expect(response.status == .unsupportedMediaType)
                #expect((response.object["message"] as? String)?.contains("Content-Type: application/json") == true)
                #expect(response.headers[.acceptPatch] == nil)
            }
            // A PATCH of another type is told which it takes (RFC 5789 2.2).
            let jsonPatch: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json-patch+json"]
            try await client.execute(uri: "/announcements/1", method: .patch, headers: jsonPatch, body: body(#"[]"#)) { response in
                #expect(response.status == .unsupportedMediaType)
                #expect(response.headers[.acceptPatch] == "application/merge-patch+json, application/json")
            }
            #expect(store.snapshot.seq == 7)
        }
    }

    @Test("Content-Type may hold empty parameters (application/json;), as RFC 9110 allows; a parameter without a value is still a 415")
    func emptyContentTypeParameters() async throws {
        try await withServer { client, store in
            for type in ["application/json;", "application/json; ; charset=utf-8", "application/json ;"] {
                try await client.execute(uri: "/announcements", method: .post, headers: alice(with: .contentType, type), body: body(#"{"title":"Typed"}"#)) { #expect($0.status == .created, "\(type)") }
            }
            #expect(store.snapshot.seq == 9)
            let valueless = alice(with: .contentType, "application/json; charset")
            try await client.execute(uri: "/announcements", method: .post, headers: valueless, body: body(#"{"title":"Typed"}"#)) { #expect($0.status == .unsupportedMediaType) }
        }
    }

    @Test("a body with a Content-Encoding (other than identity) is a 415 saying so, with Accept-Encoding: identity, and writes nothing")
    func encodedBody() async throws {
        try await withServer { client, store in
            for coding in ["gzip", "identity, gzip", "br"] {
                try await client.execute(uri: "/announcements", method: .post, headers: alice(with: .contentEncoding, coding), body: body(#"{"title":"Looks plain"}"#)) { response in
                    #expect(response.status == .unsupportedMediaType, "\(coding)")
                    #expect(response.headers[.acceptEncoding] == "identity")
                    #expect((response.object["message"] as? String)?.contains("without Content-Encoding") == true, "\(response.object)")
                }
            }
            #expect(store.snapshot.seq == 6)
            var identity = alice
            identity[.contentEncoding] = "identity"
            try await client.execute(uri: "/announcements", method: .post, headers: identity, body: body(#"{"title":"Plain"}"#)) { #expect($0.status == .created) }
        }
    }

    @Test("a null title is a 422 naming the field on PUT and PATCH too, and appends nothing", arguments: [HTTPRequest.Method.put, .patch])
    func nullTitle(method: HTTPRequest.Method) async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements/1", method: method, headers: alice, body: body(#"{"title":null}"#)) { response in
                #expect(response.status == .unprocessableContent)
                let errors = response.object["errors"] as? [[String: Any]]
                #expect(errors?.first?["field"] as? String == "title")
                #expect(errors?.first?["message"] as? String == "must not be null")
            }
            #expect(store.snapshot.seq == 6)
        }
    }

    @Test("If-Match with a stale ETag is 412 and writes nothing; the current one succeeds")
    func ifMatch() async throws {
        try await withServer { client, store in
            let etag = try await client.execute(uri: "/announcements/1", method: .get) { $0.headers[.eTag] ?? "" }
            var headers = alice
            headers[.ifMatch] = etag
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"First"}"#)) { response in
                #expect(response.status == .ok)
            }
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Second"}"#)) { response in
                #expect(response.status == .preconditionFailed)
                #expect(response.object["error"] as? Int == 412)
            }
            try await client.execute(uri: "/announcements/1", method: .delete, headers: headers) { #expect($0.status == .preconditionFailed) }
            #expect(store.snapshot.announcement(id: 1)?.title == "First")
            #expect(store.snapshot.seq == 7)
        }
    }

    @Test("a POST under a version prefix answers a Location under it, where its ETag names the representation")
    func locationUnderPrefix() async throws {
        try await withServer { client, _ in
            let etag = try await client.execute(uri: "/v3/announcements", method: .post, headers: alice, body: body(#"{"title":"Prefixed"}"#)) { response in
                #expect(response.status == .created && response.headers[.location] == "/v3/announcements/7", "\(response.headers)")
                return response.headers[.eTag] ?? ""
            }
            try await client.execute(uri: "/v3/announcements/7", method: .get, headers: [.ifNoneMatch: etag]) { #expect($0.status == .notModified) }
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Plain"}"#)) { response in
                #expect(response.headers[.location] == "/announcements/8")
            }
        }
    }

    @Test("If-None-Match on a write: * (it exists) or a tag of the current revision, weak or strong, in any representation, is a 412 that writes nothing; another tag lets it through")
    func ifNoneMatchOnWrites() async throws {
        try await withServer { client, store in
            let etag = try await client.execute(uri: "/announcements/1", method: .get) { $0.headers[.eTag] ?? "" }
            let xml = try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "application/xml"]) { $0.headers[.eTag] ?? "" }
            for method in [HTTPRequest.Method.patch, .put, .delete] {
                for header in ["*", etag, "W/" + etag, xml, #""other", "# + etag] {
                    var headers = alice
                    headers[.ifNoneMatch] = header
                    let payload = method == .delete ? nil : body(#"{"title":"Overwritten"}"#)
                    try await client.execute(uri: "/announcements/1", method: method, headers: headers, body: payload) { response in
                        #expect(response.status == .preconditionFailed, "\(method) \(header)")
                        #expect((response.object["message"] as? String)?.hasPrefix("If-None-Match ") == true, "\(response.object)")
                    }
                }
            }
            #expect(store.snapshot.seq == 6, "nothing was written")
            var headers = alice
            headers[.ifNoneMatch] = #""1-1-00000000""#
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Changed"}"#)) { #expect($0.status == .ok) }
            headers[.ifNoneMatch] = "*"
            try await client.execute(uri: "/announcements/99", method: .put, headers: headers, body: body(#"{"title":"Nowhere"}"#)) { response in
                #expect(response.status == .notFound, "no announcement to change: the write's own answer")
            }
            #expect(store.snapshot.seq == 7)
        }
    }

    @Test("If-None-Match on an announcement this node has not seen (another node made it) is decided by the store on the state it commits on: a 412 where it exists there, saying so")
    func ifNoneMatchUnseen() async throws {
        for (header, expected) in [("*", AnnouncementTag.unseen), (#""1-3-00000000""#, AnnouncementTag.unseen), (#""2-3-00000000", "other""#, nil)] {
            let head = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/announcements/1", headerFields: [.ifNoneMatch: header])
            let unchanged = try AnnouncementTag.unchanged(ifNoneMatch: Request(head: head, body: .init(buffer: ByteBuffer())), id: 1, current: { nil })
            // A list that names no revision of announcement 1 lets the write through, whatever its revision.
            #expect(unchanged?.revision == expected && unchanged?.line == nil, "\(header)")
        }
        try await withServer { _, store in
            let refused = await #expect(throws: StoreError.self) {
                try await store.update(id: 1, AnnouncementPatch(title: "Overwritten"), by: "alice", expectedRevision: AnnouncementTag.unseen)
            }
            let answer = try #require(refused.map(ErrorMiddleware<AnnouncementsRequestContext>.apiError))
            #expect(answer.status == .preconditionFailed && answer.message.hasPrefix("If-None-Match: announcement 1 exists"), "\(answer.message)")
            await #expect(throws: StoreError.notFound(id: 99)) {
                try await store.update(id: 99, AnnouncementPatch(title: "Nowhere"), by: "alice", expectedRevision: AnnouncementTag.unseen)
            }
            #expect(store.snapshot.seq == 6, "nothing was written")
        }
    }

    @Test("`*` stands alone in If-Match and If-None-Match: a list holding it is a 400 that writes nothing, never a match", arguments: [
        #""bogus", *"#, "*,", ", *", #"*, "1-1-00000000""#,
    ])
    func wildcardInList(header: String) async throws {
        try await withServer { client, store in
            for name in [HTTPField.Name.ifMatch, .ifNoneMatch] {
                for method in [HTTPRequest.Method.patch, .put, .delete] {
                    var headers = alice
                    headers[name] = header
                    let payload = method == .delete ? nil : body(#"{"title":"Overwritten"}"#)
                    try await client.execute(uri: "/announcements/1", method: method, headers: headers, body: payload) { response in
                        #expect(response.status == .badRequest, "\(name) \(method)")
                        #expect((response.object["message"] as? String)?.hasPrefix("\(name) is either * alone or a list of entity tags, not both") == true, "\(response.object)")
                    }
                }
            }
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.ifNoneMatch: header]) { response in
                #expect(response.status == .badRequest)
            }
            // Two fields make one list too.
            var fields = alice
            fields.append(HTTPField(name: .ifMatch, value: #""bogus""#))
            fields.append(HTTPField(name: .ifMatch, value: "*"))
            try await client.execute(uri: "/announcements/1", method: .delete, headers: fields) { #expect($0.status == .badRequest) }
            #expect(store.snapshot.seq == 6, "nothing was written")
            // `*` alone matches any current revision.
            var star = alice
            star[.ifMatch] = " * "
            try await client.execute(uri: "/announcements/1", method: .patch, headers: star, body: body(#"{"title":"Any revision"}"#)) { #expect($0.status == .ok) }
        }
    }

    @Test("an acknowledged write survives a restart")
    func survivesRestart() async throws {
        let folder = NSTemporaryDirectory() + "http-restart-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withServer(folder: folder) { client, _ in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Durable"}"#)) { response in
                #expect(response.status == .created)
            }
            // Acknowledged means on disk already, not at the next close.
            let logged = try String(contentsOfFile: folder + "/log.jsonl", encoding: .utf8)
            #expect(logged.hasSuffix("\n") && logged.split(separator: "\n").last?.contains(#""title":"Durable""#) == true)
        }
        try await withServer(folder: folder) { client, _ in
            try await client.execute(uri: "/announcements/7", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.object["title"] as? String == "Durable")
            }
        }
    }
}

@Suite struct DiskFullTests {
    @Test("a log that cannot be written answers 503, appends nothing, and reads go on")
    func diskFull() async throws {
        let folder = NSTemporaryDirectory() + "http-full-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var operations = FileOperations.system
        operations.write = { _, _, _ in errno = ENOSPC; return -1 }
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let store = try await EventStore.open(path: folder + "/log.jsonl", rules: ValidationRules(), seed: [], logger: quiet, operations: operations)
        let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([("alice", "alice-secret", .editor)]))
        let app = buildApplication(store: store, settings: settings, logger: quiet)
        try await app.test(.live) { client in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Lost"}"#)) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.object["error"] as? Int == 503)
                #expect((response.object["message"] as? String)?.contains("disk is full") == true)
            }
            try await client.execute(uri: "/announcements", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.objects.isEmpty)
            }
        }
        await store.close()
        #expect(try FileManager.default.attributesOfItem(atPath: folder + "/log.jsonl")[.size] as? Int == 0)
    }
}

@Suite struct IdempotencyAPITests {
    @Test("Idempotency-Key: a repeated POST gets the same 201 and id and appends nothing; a different request with the key is 422")
    func repeatedPost() async throws {
        try await withServer { client, store in
            var headers = alice
            headers[.idempotencyKey] = "0b6f3c1e-retry"
            for _ in 0..<2 {
                try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"Once","body":"<p>x</p>"}"#)) { response in
                    #expect(response.status == .created)
                    #expect(response.headers[.location] == "/announcements/7")
                    #expect(response.object["id"] as? Int == 7)
                }
            }
            #expect(store.snapshot.seq == 7)
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"Another"}"#)) { response in
                #expect(response.status == .unprocessableContent)
                #expect((response.object["message"] as? String)?.contains(#"idempotency key "0b6f3c1e-retry" was already used for a different request (event 7)"#) == true)
            }
            headers[.idempotencyKey] = "d1"
            for _ in 0..<2 {
                try await client.execute(uri: "/announcements/7", method: .delete, headers: headers) { #expect($0.status == .noContent) }
            }
            #expect(store.snapshot.seq == 8)
            headers[.idempotencyKey] = "has space"
            try await client.execute(uri: "/announcements/1", method: .delete, headers: headers) { response in
                #expect(response.status == .badRequest)
                #expect((response.object["message"] as? String)?.hasPrefix("Idempotency-Key must be") == true)
            }
            #expect(store.snapshot.seq == 8)
        }
    }
}

@Suite struct IfMatchTests {
    @Test("If-Match: * and the XML ETag match the current revision")
    func starAndXML() async throws {
        try await withServer { client, store in
            var headers = alice
            headers[.ifMatch] = "*"
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Star"}"#)) { #expect($0.status == .ok) }
            // The ETag a GET of the XML representation gives is one a write takes back.
            var xmlTag: String?
            try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "application/xml"]) { xmlTag = $0.headers[.eTag] }
            #expect(xmlTag == "\"1-7-\(store.lineTag(of: 7))-xml\"")
            headers[.ifMatch] = xmlTag
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"XML"}"#)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Stale"}"#)) { #expect($0.status == .preconditionFailed) }
            // A tag of another announcement, or of this revision of another history (another line
            // at that seq), or without a line (an earlier version's), or no tag of ours at all,
            // matches nothing.
            let revision = try #require(store.snapshot.announcement(id: 1)).revision
            let otherLine = LineTag(rawValue: store.lineTag(of: revision).rawValue ^ 1)
            for foreign in ["\"2-\(revision)-\(store.lineTag(of: revision))\"", "\"1-\(revision)-\(otherLine)\"", "\"1-\(revision)\"", "\"garbage\""] {
                headers[.ifMatch] = foreign
                try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Foreign"}"#)) { response in
                    #expect(response.status == .preconditionFailed)
                    #expect((response.object["message"] as? String)?.contains("If-Match names no revision of announcement 1") == true)
                }
            }
            // A list matches when any of its strong tags is the current one, wherever it stands in
            // it; a weak tag never does (RFC 9110 13.1.1: If-Match compares strongly).
            var current: String?
            try await client.execute(uri: "/announcements/1", method: .get) { current = $0.headers[.eTag] }
            let stale = "\"1-7-\(store.lineTag(of: 7))\""
            #expect(current != stale)
            headers[.ifMatch] = "W/\(current ?? ""), \"1-1\""
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Weak"}"#)) { #expect($0.status == .preconditionFailed) }
            headers[.ifMatch] = "\(stale), \(current ?? "")"
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Listed"}"#)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Listed again"}"#)) { #expect($0.status == .preconditionFailed) }
            headers[.ifMatch] = "*"
            try await client.execute(uri: "/announcements/99", method: .delete, headers: headers) { #expect($0.status == .notFound) }
            #expect(store.snapshot.seq == 9, "three writes went through: *, the XML tag, the list")
        }
    }
}
