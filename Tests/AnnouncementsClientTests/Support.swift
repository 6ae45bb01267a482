import AnnouncementsClient
import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization

let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

/// A seeded store behind a live server on 127.0.0.1, port 0; `test` gets the server's base URL.
func withServer(
    seed: [AnnouncementDraft] = (1...3).map { AnnouncementDraft(title: "Announcement \($0)", body: "<p>Body \($0)</p>") },
    _ test: @Sendable (URL) async throws -> Void
) async throws {
    let folder = NSTemporaryDirectory() + "client-test-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let store = try await EventStore.open(path: folder + "/log.jsonl", seed: seed, logger: quiet)
    let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([("alice", "alice-secret", .editor), ("audrey", "audrey-secret", .auditor), ("root", "root-secret", .admin)]), maxRequestBytes: 4096)
    try await buildApplication(store: store, settings: settings, logger: quiet).test(.live) { client in
        try await test(try baseURL(client))
    }
    await store.close()
}

/// A server that speaks HTTP but not the API: for the client's handling of bad answers.
func withFakeServer(_ test: @Sendable (URL) async throws -> Void) async throws {
    let router = Router()
    // Echoes the version asked for as the title, so a test sees what the client sent.
    router.get("announcements") { request, _ in
        json(#"[{"id":1,"title":"\#(request.headers[HTTPField.Name("Accept-Version")!] ?? "none")"}]"#)
    }
    router.get("announcements/4") { request, _ in
        json(#"{"id":4,"title":"\#(request.headers[HTTPField.Name("Accept-Version")!] ?? "none")","body":null}"#)
    }
    router.get("health") { request, _ in
        json(#"{"status":"\#(request.headers[HTTPField.Name("Accept-Version")!] ?? "none")","seq":0}"#)
    }
    // Echoes the Accept-Encoding the client sent as the title.
    router.get("announcements/5") { request, _ in
        json(#"{"id":5,"title":"\#(request.headers[HTTPField.Name("Accept-Encoding")!] ?? "none")","body":null}"#)
    }
    // Counts each read of announcement 7 and answers it once the count is set back to 0 (or
    // after a minute): a read to cancel.
    router.get("announcements/7") { _, _ in
        fakeHeldReads.withLock { $0 += 1 }
        let deadline = ContinuousClock.now + .seconds(60)
        while fakeHeldReads.withLock({ $0 }) > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return json(#"{"id":7,"title":"Held","body":null}"#)
    }
    router.get("announcements/1") { _, _ in json("<html>not JSON</html>") }
    router.get("announcements/2") { _, _ in json(#"{"title":"no id"}"#) }
    router.get("announcements/3") { _, _ in json(#"{"id":"3","title":"id is a string"}"#) }
    // Records each write's Idempotency-Key; the first write is answered only once another
    // arrived (its client gave up waiting and sent it again), whatever the time that takes.
    router.post("announcements") { request, _ in
        let first = fakeWriteKeys.withLock { keys in
            keys.append(request.headers[HTTPField.Name("Idempotency-Key")!] ?? "")
            return keys.count == 1
        }
        // (A client that never retries gets its answer after a minute: the test fails, not hangs.)
        let deadline = ContinuousClock.now + .seconds(60)
        while first, fakeWriteKeys.withLock({ $0.count }) < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return json(#"{"id":9,"title":"Saved","body":null}"#)
    }
    // A read answered 502 (a proxy whose node died) the first time, then as any other.
    router.get("announcements/6") { _, _ in
        let first = fakeReads.withLock { count in
            count += 1
            return count == 1
        }
        guard !first else {
            return Response(status: .badGateway, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>502 Bad Gateway</html>")))
        }
        return json(#"{"id":6,"title":"Read again","body":null}"#)
    }
    // Records each replace's Idempotency-Key by id; the first of each id is answered with the
    // status its first three digits name (id 5031: 503; 502, 503, 504: a proxy whose node died, a
    // node that could not write), with a `Retry-After` of 1 s for 503. Each test its own id.
    router.put("announcements/:id") { request, context in
        let id = context.parameters.get("id", as: Int.self) ?? 0
        // Id 1010: answered after 3 s, as a node that waited for the writer role (up to 10 s).
        if id == 1010 {
            fakeReplaceKeys.withLock { $0[id, default: []].append(request.headers[HTTPField.Name("Idempotency-Key")!] ?? "") }
            try await Task.sleep(for: .seconds(3))
            return json(#"{"id":1010,"title":"Replaced late","body":null}"#)
        }
        fakeReplaceTokens.withLock { $0[id, default: []].append(request.headers[.authorization] ?? "") }
        let first = fakeReplaceKeys.withLock { keys in
            keys[id, default: []].append(request.headers[HTTPField.Name("Idempotency-Key")!] ?? "")
            return keys[id]?.count == 1
        }
        guard !first else {
            if let whenFirst = fakeReplaceFirstSeen.withLock({ $0.removeValue(forKey: id) }) { whenFirst() }
            let status = id / 10
            var headers: HTTPFields = [.contentType: "application/json"]
            // (Id 5039: 10 s, a wait long enough to be cancelled during, even on a busy machine.)
            if status == 503 { headers[.retryAfter] = id == 5039 ? "10" : "1" }
            return Response(
                status: .init(code: status), headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":\#(status),"message":"the log cannot be written right now"}"#))
            )
        }
        return json(#"{"id":\#(id),"title":"Replaced","body":null}"#)
    }
    // Read-your-writes: a write through `<mode>/announcements` is answered with `Log-Seq: 9`; a
    // read of `<mode>/announcements/1` records its `Min-Seq` ("-" for none) and, while it carries
    // one, answers as `mode` says: `beyond`, a 409 (a log restored from an older backup);
    // `behind-N`, a 503 with `Retry-After: 0` the first N times (a node that has not taken the seq
    // in yet); `slow`, that 503 once after 6 s (as a node waits for the seq), recording "503" as it answers; `unrelated`, a
    // 409 that is not about `Min-Seq`; `gateway`, a 502 the first time (a proxy whose node died).
    // The announcement's title is the `Min-Seq` it got. A read
    // of the list `<mode>/announcements` (one summary, the same title) and of `<mode>/health`
    // record theirs too.
    router.post(":mode/announcements") { _, _ in
        Response(
            status: .created, headers: [.contentType: "application/json", HTTPField.Name("Log-Seq")!: "9"],
            body: .init(byteBuffer: ByteBuffer(string: #"{"id":1,"title":"Posted","body":null}"#))
        )
    }
    router.get(":mode/announcements/:id") { request, context in
        let mode = context.parameters.get("mode") ?? ""
        let minSeq = request.headers[HTTPField.Name("Min-Seq")!]
        let count = fakeMinSeqs.withLock { seen in
            seen[mode, default: []].append(minSeq ?? "-")
            return seen[mode, default: []].count
        }
        if minSeq != nil, mode == "beyond" || mode == "unrelated" {
            let body = mode == "unrelated"
                ? #"{"error":409,"message":"announcement 1 has events in the log's first format"}"#
                : #"{"error":409,"message":"Min-Seq 9 is beyond the end of the log, which ends at seq 3","minSeq":9,"lastSeq":3}"#
            return Response(status: .conflict, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        if minSeq != nil, mode == "gateway", count == 1 {
            return Response(status: .badGateway, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>502 Bad Gateway</html>")))
        }
        let behind = mode == "slow" ? 1 : mode.hasPrefix("behind-") ? Int(mode.dropFirst("behind-".count)) ?? 0 : 0
        if minSeq != nil, count <= behind {
            if mode == "slow" {
                try await Task.sleep(for: .seconds(6))
                fakeMinSeqs.withLock { $0[mode, default: []].append("503") }
            }
            let body = #"{"error":503,"message":"this node has the log up to seq 3: seq 9 has not reached it within 5 s; try again","minSeq":9,"lastSeq":3}"#
            return Response(status: .serviceUnavailable, headers: [.contentType: "application/json", .retryAfter: "0"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        return json(#"{"id":1,"title":"\#(minSeq ?? "none")","body":null}"#)
    }
    router.get(":mode/announcements") { request, context in
        let minSeq = request.headers[HTTPField.Name("Min-Seq")!]
        fakeMinSeqs.withLock { $0[context.parameters.get("mode") ?? "", default: []].append("list " + (minSeq ?? "-")) }
        return json(#"[{"id":1,"title":"\#(minSeq ?? "none")"}]"#)
    }
    router.get(":mode/health") { request, context in
        let minSeq = request.headers[HTTPField.Name("Min-Seq")!]
        fakeMinSeqs.withLock { $0[context.parameters.get("mode") ?? "", default: []].append("health " + (minSeq ?? "-")) }
        return json(#"{"status":"ok","seq":9}"#)
    }
    // The feed read in pages: `<mode>/events?after=N` records "MODE N MIN-SEQ" ("-" for none) and
    // answers, by mode: `beyondpages`, the 409 of a server alone on a log that ends at 1 for any
    // Min-Seq; any other (a test's own), the events after N up to 3, at most 2 a page, with a 503
    // (`Retry-After: 0`) the first time that mode is asked for the page after 2.
    router.get(":mode/events") { request, context in
        let mode = context.parameters.get("mode") ?? ""
        let after = Int(request.uri.queryParameters["after"].map(String.init) ?? "") ?? 0
        let minSeq = request.headers[HTTPField.Name("Min-Seq")!]
        let asked = fakePages.withLock { pages in
            pages.append("\(mode) \(after) \(minSeq ?? "-")")
            return pages.filter { $0.hasPrefix("\(mode) \(after) ") }.count
        }
        if mode == "beyondpages", let minSeq {
            let body = #"{"error":409,"message":"Min-Seq \#(minSeq) is beyond the end of the log, which ends at seq 1","minSeq":\#(minSeq),"lastSeq":1}"#
            return Response(status: .conflict, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        if after == 2, asked == 1 {
            return Response(status: .serviceUnavailable, headers: [.contentType: "application/json", .retryAfter: "0"], body: .init(byteBuffer: ByteBuffer(string: #"{"error":503,"message":"busy"}"#)))
        }
        let lines = after >= 3 ? [] : (after + 1...min(after + 2, 3)).map { #"{"seq":\#($0),"type":"created","id":\#($0),"at":"2026-11-24T10:00:00.000Z"}"# }
        return json("[" + lines.joined(separator: ",") + "]")
    }
    // A stream cut off after one event (a node killed mid-stream): the client must reconnect.
    router.get("abrupt/events") { request, _ in
        let last = Int(request.headers[HTTPField.Name("Last-Event-ID")!] ?? "") ?? -1
        fakeAbruptResumes.withLock { $0.append(last) }
        let block = "id: \(last + 1)\nevent: created\ndata: {\"seq\":\(last + 1)}\n\n"
        return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: block))
            throw CancellationError()
        })
    }
    // A stream that sends every event again from seq 1 up to one new one, then ends (a proxy that
    // replays): records "LAST-EVENT-ID MIN-SEQ" ("-" for none) of each connection.
    router.get("replaying/events") { request, _ in
        let last = Int(request.headers[HTTPField.Name("Last-Event-ID")!] ?? "") ?? 0
        let minSeq = request.headers[HTTPField.Name("Min-Seq")!] ?? "-"
        fakeReplayingResumes.withLock { $0.append("\(last) \(minSeq)") }
        let blocks = (1...last + 1).map { "id: \($0)\nevent: created\ndata: {\"seq\":\($0)}\n\n" }
        return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: .init(byteBuffer: ByteBuffer(string: blocks.joined())))
    }
    // A delete answered 204 without Log-Seq, as servers before 1.20.0 answer it.
    router.delete(":mode/announcements/:id") { _, _ in Response(status: .noContent) }
    // A delete answered as a captive portal answers anything: a 200 page, not the API's 204.
    router.delete("announcements/:id") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>log in to the network</html>")))
    }
    // A server in trouble: each stream opens (its first comment) and ends at once, with no event.
    // Records when each connection came.
    router.get("troubled/events") { _, _ in
        fakeTroubledConnections.withLock { $0.append(.now) }
        return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: .init(byteBuffer: ByteBuffer(string: ": following the log after 0\n\n: error: the log cannot be read\n\n")))
    }
    // What a captive portal answers for any URL: a 200 page, not the API.
    router.get("portal/events") { _, _ in
        Response(status: .ok, headers: [.contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>log in to the network</html>")))
    }
    // A feed that ends after one event, each time: the client must reconnect with Last-Event-ID.
    router.get("events") { request, _ in
        let last = Int(request.headers[HTTPField.Name("Last-Event-ID")!] ?? "") ?? -1
        fakeFeedResumes.withLock { $0.append(last) }
        let block = "id: \(last + 1)\nevent: created\ndata: {\"seq\":\(last + 1)}\n\n"
        return Response(status: .ok, headers: [.contentType: "text/event-stream"], body: .init(byteBuffer: ByteBuffer(string: block)))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quiet)
    try await app.test(.live) { client in try await test(try baseURL(client)) }
}

/// A server that answers every request of the API with a redirect (`status`) to the same path
/// under `/elsewhere` on itself, and records each request that reaches `/elsewhere` ("METHOD PATH
/// AUTHORIZATION" in `fakeRedirectsFollowed`, emptied first): for the client's refusal to follow one.
func withRedirectingServer(status: HTTPResponse.Status, _ test: @Sendable (URL) async throws -> Void) async throws {
    fakeRedirectsFollowed.withLock { $0 = [] }
    let router = Router()
    let redirect: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
        Response(status: status, headers: [.location: "/elsewhere" + request.uri.path, .contentType: "text/html"], body: .init(byteBuffer: ByteBuffer(string: "<html>moved</html>")))
    }
    router.get("announcements/:id", use: redirect)
    router.post("announcements", use: redirect)
    router.get("events", use: redirect)
    let record: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
        fakeRedirectsFollowed.withLock { $0.append("\(request.method) \(request.uri.path) \(request.headers[.authorization] ?? "-")") }
        return json(#"{"id":1,"title":"Elsewhere","body":null}"#)
    }
    router.get("elsewhere/**", use: record)
    router.post("elsewhere/**", use: record)
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quiet)
    try await app.test(.live) { client in try await test(try baseURL(client)) }
}

/// Each request that reached where `withRedirectingServer`'s redirects point.
let fakeRedirectsFollowed = Mutex<[String]>([])

/// When each stream `troubled/events` opened came.
let fakeTroubledConnections = Mutex<[ContinuousClock.Instant]>([])

/// Each page request of the feed read in pages: "AFTER MIN-SEQ".
let fakePages = Mutex<[String]>([])

/// The `Last-Event-ID` of each feed request the fake server received.
let fakeFeedResumes = Mutex<[Int]>([])

/// The `Idempotency-Key` of each write the fake server received.
let fakeWriteKeys = Mutex<[String]>([])

/// How many reads of announcement 6 the fake server received.
let fakeReads = Mutex<Int>(0)

/// How many reads of announcement 7 the fake server received and holds (0 lets them go).
let fakeHeldReads = Mutex<Int>(0)

/// The `Idempotency-Key` of each replace the fake server received, by the id replaced.
let fakeReplaceKeys = Mutex<[Int: [String]]>([:])

/// The `Authorization` of each replace the fake server received (but id 1010's), by the id replaced.
let fakeReplaceTokens = Mutex<[Int: [String]]>([:])

/// What to do when a replace's first attempt arrives, before it is answered, by the id replaced.
let fakeReplaceFirstSeen = Mutex<[Int: @Sendable () -> Void]>([:])

/// The `Min-Seq` of each read of `<mode>/announcements/1` ("-" for none), by mode.
let fakeMinSeqs = Mutex<[String: [String]]>([:])

/// "LAST-EVENT-ID MIN-SEQ" of each connection to the stream that replays what came before.
let fakeReplayingResumes = Mutex<[String]>([])

/// The `Last-Event-ID` of each request of the stream that is cut off.
let fakeAbruptResumes = Mutex<[Int]>([])

private func json(_ text: String) -> Response {
    Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
}

private func baseURL(_ client: any TestClientProtocol) throws -> URL {
    guard let port = client.port, let url = URL(string: "http://127.0.0.1:\(port)") else { throw URLError(.badURL) }
    return url
}

/// How long a test's client waits for an answer: generous, since CI runs beside busy processes
/// (a test checks what is answered, never how fast; the client's own default is 5 s).
let testTimeout: TimeInterval = 60
