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

@Suite struct ErasureAPITests {
    static let admin: HTTPFields = [.authorization: "Bearer ada-secret", .contentType: "application/json"]

    @Test("POST /announcements/{id}/erase: an admin erases; the texts leave every API, the skeleton stays for auditors, a second erasure is 410")
    func erases() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"title":"Jane Roe's salary, corrected"}"#)) { #expect($0.status == .ok) }
            let past = try await client.execute(uri: "/announcements?asOf=7&max=100", method: .get, headers: auditor)
            #expect(String(buffer: past.body).contains("Jane Roe"), "before the erasure, the past shows it")
            try await client.execute(uri: "/announcements/2/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"personal data"}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.object["id"] as? Int == 2)
                #expect(response.object["seq"] as? Int == 8)
                #expect(response.object["sealedLines"] as? [Int] == [2, 7])
                #expect(response.headers[.logSeq] == "8")
            }
            try await client.execute(uri: "/v1/announcements/2", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/v1/announcements?max=100", method: .get) { response in
                #expect(!String(buffer: response.body).contains("Grails Quickcast #2"))
                #expect(response.objects.count == 5)
            }
            try await client.execute(uri: "/announcements/2?asOf=2", method: .get, headers: auditor) { response in
                #expect(response.status == .gone)
                #expect(response.object["message"] as? String == "announcement 2 was erased (event 8): its texts are gone")
            }
            // A past list leaves it out: its texts are gone from every point, and a client that
            // kept the page from before gets the new one, not a 304.
            try await client.execute(uri: "/announcements?asOf=7&max=100", method: .get, headers: [.authorization: "Bearer audrey-secret", .ifNoneMatch: past.headers[.eTag] ?? ""]) { response in
                #expect(response.status == .ok)
                #expect(response.objects.map { $0["id"] as? Int } == [1, 3, 4, 5, 6])
                #expect(response.headers[.totalCount] == "5")
                #expect(!String(buffer: response.body).contains("Jane Roe"))
            }
            try await client.execute(uri: "/announcements/2/history", method: .get, headers: auditor) { response in
                #expect(response.status == .ok)
                #expect(response.objects.map { $0["type"] as? String } == ["created", "edited", "erased"])
                #expect(response.objects.map { $0["by"] as? String } == ["seed", "alice", "ada"])
                #expect(response.objects.prefix(2).allSatisfy { $0["data"] == nil && ($0["sealed"] as? String)?.count == 64 })
                #expect((response.objects.last?["data"] as? [String: Any])?["reason"] as? String == "personal data")
            }
            for (uri, headers) in [("/events?limit=100", auditor), ("/events?limit=100", [:] as HTTPFields)] {
                try await client.execute(uri: uri, method: .get, headers: headers) { response in
                    let text = String(buffer: response.body)
                    #expect(!text.contains("Quickcast #2") && !text.contains("Jane Roe") && !text.contains("Body of announcement 2"))
                    #expect(response.objects.count == 8)
                }
            }
            try await client.execute(uri: "/announcements/2/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"again"}"#)) { #expect($0.status == .gone) }
            try await client.execute(uri: "/announcements/99/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"none"}"#)) { #expect($0.status == .notFound) }
            let report = try LogReader(path: store.path).verify()
            #expect(report.isSound && report.erasedLines == 2, "\(report.problems)")
        }
    }

    @Test("an erasure whose snapshot cannot be deleted, or whose overwrite failed, is a 503 that says so, not that the log cannot be written (it can); a write that failed says that")
    func copiesLeftAnswer() {
        let copiesLeft = StoreError.log(LogError(.copiesLeft, path: "events/a.jsonl", message: "announcement 2 is erased (event 8) and its lines overwritten, but the snapshot beside the log cannot be deleted (events/a.jsonl.snapshot: Is a directory)"))
        let answer = ErrorMiddleware<AnnouncementsRequestContext>.apiError(copiesLeft)
        #expect(answer.status == .serviceUnavailable)
        #expect(answer.message == "announcement 2 is erased (event 8) and its lines overwritten, but the snapshot beside the log cannot be deleted (events/a.jsonl.snapshot: Is a directory)")
        let unsealed = ErrorMiddleware<AnnouncementsRequestContext>.apiError(.log(LogError(.sealsLeft, path: "events/a.jsonl", message: "announcement 2 is erased (event 8), but its lines could not be overwritten yet: cannot create the erasure's journal: Permission denied. Erase it again, or restart the server, to finish")))
        #expect(unsealed.status == .serviceUnavailable)
        #expect(unsealed.message == "announcement 2 is erased (event 8), but its lines could not be overwritten yet: cannot create the erasure's journal: Permission denied. Erase it again, or restart the server, to finish")
        let failed = ErrorMiddleware<AnnouncementsRequestContext>.apiError(.log(LogError(.writeFailed, path: "events/a.jsonl", message: "No space left on device")))
        #expect(failed.status == .serviceUnavailable && failed.message == "the log cannot be written right now; reads still work. No space left on device", "\(failed.message)")
    }

    @Test("erasing an announcement never created is a 404 that says so (a deleted one is erased as a live one is), and nothing is appended")
    func neverCreated() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements/99/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"personal data"}"#)) { response in
                #expect(response.status == .notFound)
                #expect(response.object["message"] as? String == "announcement 99 was never created: there is nothing to erase")
            }
            #expect(store.lastSeq == 6)
        }
    }

    @Test("an erasure whose Accept takes no JSON is a 406 before anything is erased", arguments: ["text/html", "application/xml"])
    func notAcceptable(accept: String) async throws {
        try await withServer { client, store in
            var headers = Self.admin
            headers[.accept] = accept
            try await client.execute(uri: "/announcements/2/erase", method: .post, headers: headers, body: body(#"{"reason":"personal data"}"#)) { response in
                #expect(response.status == .notAcceptable)
                #expect(String(buffer: response.body).contains("answer is JSON only"))
            }
            #expect(store.lastSeq == 6)
            try await client.execute(uri: "/v1/announcements/2", method: .get) { #expect($0.status == .ok) }
        }
    }

    @Test("erasing from a log in the first format is a 409 that says to upgrade it, through the API and as a page, and nothing is appended")
    func needsUpgrade() async throws {
        let folder = NSTemporaryDirectory() + "http-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.firstFormatLog([(1, "Holiday rota"), (2, "Parking")]).write(to: URL(fileURLWithPath: folder + "/log.jsonl"))
        try await withServer(seed: [], folder: folder) { client, store in
            let message = "announcement 1 has events in the log's first format (lines 1), whose place in the hash chain covers their text: stop the server and run `announcements upgrade` on the log, then erase"
            try await client.execute(uri: "/announcements/1/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"personal data"}"#)) { response in
                #expect(response.status == .conflict)
                #expect(response.object["message"] as? String == message)
            }
            try await client.execute(uri: "/a/1/erase", method: .post, headers: WebRoutesTests.post("ada-secret"), body: body("reason=personal+data")) { response in
                #expect(response.status == .conflict)
                let html = String(buffer: response.body)
                #expect(html.contains("Not possible with this log") && !html.contains("Changed meanwhile"), "\(html)")
                #expect(html.contains("stop the server and run `announcements upgrade` on the log, then erase."), "\(html)")
            }
            #expect(store.lastSeq == 2 && store.snapshot.erased.isEmpty)
        }
    }

    /// A log of created events in the first format (no salt, no `v`), chained.
    static func firstFormatLog(_ titles: [(id: Int, title: String)]) -> Data {
        var text: [UInt8] = []
        var prev: LineHash?
        for (seq, entry) in titles.enumerated() {
            let event = Event(seq: seq + 1, id: entry.id, at: Timestamp(millisecondsSince1970: 1_795_253_400_000), by: "seed", change: .created(AnnouncementDraft(title: entry.title)), prev: prev)
            let line = event.encodedLine()
            prev = LineHash(link: line)
            text += line + [UInt8(ascii: "\n")]
        }
        return Data(text)
    }

    @Test("the read routes' encoded answers let go of an erased announcement's texts once the store takes the erasure in (the routes ask to be told as they are added)")
    func cachedAnswersForgotten() async throws {
        let path = NSTemporaryDirectory() + "http-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try await EventStore.open(path: path + "/log.jsonl", seed: reference, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let reads = ReadRoutes(store: store, access: Access(testTokens), defaultVersion: .v1, feedHeartbeat: .seconds(15), streams: StreamSlots(maxConnections: 10))
        reads.add(to: Router(context: AnnouncementsRequestContext.self))
        for id in [2, 3] {
            let announcement = try #require(store.snapshot.announcement(id: id))
            _ = reads.cache.item(announcement, seq: store.seq, media: .json, detailed: false, coding: nil, tag: { "\"\(id)\"" }) { ReadRoutes.encode(announcement, .v1) }
        }
        let key = RepresentationCache.PageKey(version: .v1, media: .json, query: PageQuery())
        _ = try reads.cache.page(key, seq: store.seq, coding: nil, tag: { "\"list\"" }) { () throws(APIError) in try ReadRoutes.encodeList(store.snapshot, PageQuery(), .v1, .json) }
        #expect(reads.cache.itemIDs == [2, 3] && reads.cache.pageBytes > 0)
        _ = try await store.erase(id: 2, by: "ada", reason: "personal data")
        #expect(reads.cache.itemIDs == [3] && reads.cache.pageBytes == 0)
        await store.close()
    }

    @Test("a repeat of a keyed write of an erased announcement is the same 410 whether it repeats the request or guesses another: it confirms no guess of the texts")
    func keyedRepeatAfterErasure() async throws {
        try await withServer { client, store in
            var headers = alice
            headers[.idempotencyKey] = "salary-note"
            let original = #"{"title":"Jane Roe's salary","body":"<p>123,456 a year</p>"}"#
            try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(original)) { #expect($0.status == .created) }
            try await client.execute(uri: "/announcements/7/erase", method: .post, headers: Self.admin, body: body(#"{"reason":"personal data"}"#)) { #expect($0.status == .ok) }
            var answers: [String] = []
            for guess in [original, #"{"title":"Jane Roe's salary","body":"<p>99,000 a year</p>"}"#] {
                let response = try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(guess))
                #expect(response.status == .gone, "\(guess)")
                #expect(response.object["message"] as? String == "announcement 7 was erased (event 8): its texts are gone", "\(guess)")
                answers.append(String(buffer: response.body))
            }
            #expect(answers.count == 2 && answers[0] == answers[1], "\(answers)")
            // A request that is invalid in itself is refused for that, as any write is: it says
            // nothing of the erased texts.
            let invalid = try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"Jane Roe\u0001"}"#))
            #expect(invalid.status == .unprocessableContent, "\(String(buffer: invalid.body))")
            // Another action with the key (an edit of another announcement) is a reused key, as
            // before the erasure: its texts are not compared with anything.
            let edit = try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Canteen"}"#))
            #expect(edit.status == .unprocessableContent, "\(String(buffer: edit.body))")
            #expect(store.lastSeq == 8, "nothing appended")
        }
    }

    @Test("an erasure's body is a JSON object with a reason: each mistake is named, and nothing is appended")
    func badBodies() async throws {
        try await withServer { client, store in
            let cases: [(String, HTTPResponse.Status, String)] = [
                (#"{}"#, .unprocessableContent, "an erasure needs a reason"),
                (#"{"reason":"   "}"#, .unprocessableContent, "the reason is not valid: reason must not be blank"),
                (#"{"reason":"a\u001bb"}"#, .unprocessableContent, "the reason is not valid: reason must not contain control characters (U+001B at character 2)"),
                (#"{"reason":"x","why":"y"}"#, .badRequest, "unknown field `why`: an erasure has a `reason`"),
                (#"{"reason":"x","reason":"y"}"#, .badRequest, "field `reason` appears twice in the request body: send each field once"),
                (#"{"reason":7}"#, .badRequest, "field `reason` must be a string"),
                (#"["reason"]"#, .badRequest, #"the request body must be a JSON object like {"reason": "…"}"#),
                (#"{"reason":"#, .badRequest, "the request body is not valid JSON"),
                // RFC 8259 only, as every write's body: a trailing comma, a comment, a lone surrogate.
                (#"{"reason":"x",}"#, .badRequest, "the request body is not valid JSON (invalid JSON at column"),
                (#"{"reason":"x"} // why"#, .badRequest, "the request body is not valid JSON (invalid JSON at column"),
                (#"{"reason":"\ud800"}"#, .badRequest, "the request body is not valid JSON (invalid JSON at column"),
            ]
            for (text, status, message) in cases {
                try await client.execute(uri: "/announcements/1/erase", method: .post, headers: Self.admin, body: body(text)) { response in
                    #expect(response.status == status, "\(text)")
                    #expect((response.object["message"] as? String)?.hasPrefix(message) == true, "\(text): \(response.object)")
                }
            }
            var plain = Self.admin
            plain[.contentType] = "text/plain"
            try await client.execute(uri: "/announcements/1/erase", method: .post, headers: plain, body: body(#"{"reason":"x"}"#)) { #expect($0.status == .unsupportedMediaType) }
            #expect(store.lastSeq == 6, "nothing appended")
        }
    }
}
