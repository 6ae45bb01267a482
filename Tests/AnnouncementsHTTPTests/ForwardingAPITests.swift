import AnnouncementsDomain
@testable import AnnouncementsHTTP
@testable import AnnouncementsPostgres
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import Testing

/// Two nodes on one PostgreSQL table, in this process: a write through the node without the
/// writer role goes to the one that holds it.
@Suite(.enabled(
    if: !(ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? "").isEmpty,
    "ANNOUNCEMENTS_TEST_POSTGRES_URL is not set: run `make test` (scripts/test.sh starts a throwaway PostgreSQL)"
))
struct ForwardingAPITests {
    let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let settings = ServerSettings(host: "127.0.0.1", port: 0, access: Access([
        ("alice", "alice-secret", .editor), ("root", "root-secret", .admin), ("ann", "ann-secret", .auditor),
    ]))
    let alice: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json"]

    @Test("a write through a node without the writer role goes to the node that holds it: the role stays there, the answer is the holder's, the node it came to has it when it answers, and the log holds it once")
    func forwardedToHolder() async throws {
        let table = uniqueTable()
        let (a, logA) = try await openNode(table)
        let (b, logB) = try await openNode(table)
        try await listening(on: table, sessions: 2)
        try await buildApplication(store: a, settings: settings, logger: quiet).test(.live) { nodeA in
            // Through AsyncHTTPClient: requests sent together go on connections of their own.
            // Waits of minutes for A's answers and for B to take in what A wrote: A and B run on
            // this test's cooperative pool, which a busy machine may leave unrun for longer than
            // the 2 s and 5 s a server waits (B would then make the write itself).
            let applicationB = buildApplication(store: b, settings: settings, logger: quiet, forwarding: WriteForwarder.Waits(answer: .seconds(120), catchUp: .seconds(120)))
            try await applicationB.test(.ahc(.http)) { nodeB in
                let first = try await nodeA.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"One"}"#))
                #expect(first.status == .created)
                #expect(logA.holdsWriterRole)
                // B learns where writes go from A's notice of its append.
                let holder = try #require(nodeA.port.map { "http://127.0.0.1:\($0)" })
                let deadline = ContinuousClock.now + .seconds(60)
                while b.writeHolder == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                #expect(b.writeHolder == holder)
                #expect(a.writeHolder == nil, "the holder makes its writes itself")

                let second = try await nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Two","body":"<p>via B</p>"}"#))
                #expect(second.status == .created, "\(String(buffer: second.body))")
                #expect(second.headers[.location] == "/announcements/2" && second.headers[.eTag] != nil && second.headers[HTTPField.Name("Log-Seq")!] == "2")
                #expect(second.headers[.idempotencyKey]?.hasPrefix("forwarded-") == true, "the key made for it comes back")
                #expect(logA.holdsWriterRole && !logB.holdsWriterRole, "the role stayed with the node that held it")
                // Read back through B without Min-Seq: B took the write in before it answered.
                #expect(b.snapshot.announcement(id: 2)?.title == "Two")
                let read = try await nodeB.execute(uri: "/announcements/2", method: .get, headers: [HTTPField.Name("Accept-Version")!: "1.0"])
                #expect(read.status == .ok && String(buffer: read.body).contains("via B"))
                // Writes that come together go on together (in as many requests as it takes), each answered.
                let together = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for n in 0..<8 {
                        group.addTask {
                            try await nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"B\#(n)"}"#)).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(together == Array(repeating: .created, count: 8) && b.snapshot.seq == 10 && a.snapshot.seq == 10)
                #expect(logA.holdsWriterRole && !logB.holdsWriterRole, "the role stayed with the node that held it")
                // Refusals come back as the holder made them, with its reasons.
                let refused = try await nodeB.execute(uri: "/announcements/2", method: .put, headers: alice.merging([.ifMatch: "\"1\""]), body: ByteBuffer(string: #"{"title":"Stale"}"#))
                #expect(refused.status == .preconditionFailed, "\(String(buffer: refused.body))")
                let anonymous = try await nodeB.execute(uri: "/announcements", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: #"{"title":"Who"}"#))
                #expect(anonymous.status == .unauthorized && anonymous.headers[.wwwAuthenticate] != nil)
                // With the headers that say what to send instead.
                let wrongType = try await nodeB.execute(uri: "/announcements/2", method: .patch, headers: [.authorization: "Bearer alice-secret", .contentType: "text/plain"], body: ByteBuffer(string: "Two"))
                #expect(wrongType.status == .unsupportedMediaType && wrongType.headers[.acceptPatch] == JSONBody.acceptPatch, "\(wrongType.headers)")
                let gzipped = try await nodeB.execute(uri: "/announcements", method: .post, headers: alice.merging([.contentEncoding: "gzip"]), body: ByteBuffer(string: #"{"title":"Zipped"}"#))
                #expect(gzipped.status == .unsupportedMediaType && gzipped.headers[.acceptEncoding] == "identity", "\(gzipped.headers)")
                // A write without a body or any length (HTTP/1.1's empty body; the router's test
                // client adds no length): its 411 as a node alone gives it, not the holder's 400
                // for an empty body it was given with a length.
                try await buildApplication(store: b, settings: settings, logger: quiet).test(.router) { routerB in
                    let unframed = try await routerB.execute(uri: "/announcements", method: .post, headers: alice, body: nil)
                    #expect(unframed.status == .lengthRequired, "\(String(buffer: unframed.body))")
                }
                // The forwarded write carries a key of its own, so that it can be made again safely.
                let made = try await a.history(id: 2)?.first?.event
                #expect(a.snapshot.seq == 10 && made?.key == second.headers[.idempotencyKey])
                // An erasure is made where it comes: the role moves to B for it.
                let erased = try await nodeB.execute(
                    uri: "/announcements/2/erase", method: .post, headers: [.authorization: "Bearer root-secret", .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"reason":"posted by mistake"}"#)
                )
                #expect(erased.status == .ok || erased.status == .noContent, "\(String(buffer: erased.body))")
                #expect(logB.holdsWriterRole, "made through B")
            }
        }
        await a.close()
        await b.close()
    }

    @Test("a forwarded write the holder does not answer in time is made where it came, with the key it was sent with: the role moves there, and nothing is written twice")
    func holderSilent() async throws {
        let keys = Mutex<[String]>([])
        try await throughStandIn({ request, _ in
            keys.withLock { $0.append(request.headers[.idempotencyKey] ?? "none") }
            try await Task.sleep(for: .seconds(5))
            return Response(status: .created)
        }) { nodes in
            let (b, logA, logB) = (nodes.b, nodes.logA, nodes.logB)
            let second = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Two"}"#))
            #expect(second.status == .created, "\(String(buffer: second.body))")
            let sent = try #require(keys.withLock { $0 }.first)
            #expect(sent.hasPrefix("forwarded-"))
            #expect(logB.holdsWriterRole && !logA.holdsWriterRole, "made through B, which took the role")
            #expect(second.headers[.idempotencyKey] == sent, "the key it was sent with comes back, for a retry")
            let made = try await b.history(id: 2)?.first?.event
            #expect(b.snapshot.seq == 2 && made?.key == sent, "made with the key it was sent with")
            // The writes after it are made here, not sent to the silent holder again.
            let third = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Three"}"#))
            #expect(third.status == .created && keys.withLock { $0.count } == 1 && b.snapshot.seq == 3)
        }
    }

    @Test("a forwarded write the holder answers 503 (it lost the role, or cannot write) is made where it came (the 503 not passed back), with the key it was sent with; the id the node gave the request goes with it")
    func holderUnavailable() async throws {
        let sent = Mutex<[(key: String?, id: String?)]>([])
        try await throughStandIn({ request, _ in
            sent.withLock { $0.append((request.headers[.idempotencyKey], request.headers[.requestID])) }
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "1"])
        }) { nodes in
            let (b, logA, logB) = (nodes.b, nodes.logA, nodes.logB)
            let second = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Two"}"#))
            #expect(second.status == .created, "the holder's 503 is not passed back: \(String(buffer: second.body))")
            let request = try #require(sent.withLock { $0 }.first)
            #expect(request.id != nil && request.id == second.headers[.requestID], "the id B gave the request goes on: both access logs name it")
            #expect(request.key?.hasPrefix("forwarded-") == true && second.headers[.idempotencyKey] == request.key)
            #expect(logB.holdsWriterRole && !logA.holdsWriterRole, "made through B, which took the role")
            #expect(b.snapshot.seq == 2 && b.snapshot.announcement(id: 2)?.title == "Two")
        }
    }

    @Test("a forwarded write that the node then cannot make itself either is a 503 that carries the key it was sent with and says that the holder may still commit it")
    func madeHereRefused() async throws {
        try await throughStandIn({ _, _ in Response(status: .serviceUnavailable, headers: [.retryAfter: "1"]) }) { nodes in
            // B's store takes no more writes: the write it makes after the holder's 503 fails.
            await nodes.b.close()
            let refused = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Two"}"#))
            #expect(refused.status == .serviceUnavailable)
            let key = try #require(refused.headers[.idempotencyKey])
            #expect(key.hasPrefix("forwarded-"))
            #expect(String(buffer: refused.body).contains("which may still commit it: retry with this answer's Idempotency-Key, \(key), so that it is made once"), "\(String(buffer: refused.body))")
        }
    }

    @Test("a holder that commits a forwarded write and answers too late: the node makes it again with the key it was sent with, which finds the holder's commit: the first outcome, one event")
    func holderLate() async throws {
        let answered = Mutex<[String]>([])
        // The node waits 10 s for the answer: time for the holder's commit on a machine whose
        // cooperative pool (which runs both) is busy, well before the node stops waiting.
        try await throughStandIn(answerLimit: .seconds(10), { request, a in
            // The holder commits the write with the key it was sent, then answers after the node stopped waiting.
            let key = request.headers[.idempotencyKey]
            let made = try await a.create(AnnouncementDraft(title: "Two", body: nil), by: "alice", key: key)
            answered.withLock { $0.append("\(made.id) \(key ?? "none")") }
            try await Task.sleep(for: .seconds(15))
            return Response(status: .created)
        }) { nodes in
            let (a, b) = (nodes.a, nodes.b)
            let second = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"Two"}"#))
            let key = try #require(second.headers[.idempotencyKey])
            #expect(answered.withLock { $0 } == ["2 \(key)"], "the holder committed it, with the key the node made")
            #expect(second.status == .created && second.headers[.location] == "/announcements/2", "the first outcome: \(String(buffer: second.body))")
            #expect(b.snapshot.seq == 2 && a.snapshot.seq == 2, "in the log once")
            let events = try await b.history(id: 2) ?? []
            #expect(events.count == 1 && events.first?.event.key == key)
        }
    }

    @Test("writes that come to a node while its requests to the holder are all out go together in its next request, and each gets its own answer")
    func forwardedTogether() async throws {
        let held = Mutex(0)
        let release = Mutex(false)
        // The requests out wait for the stand-in longer than the test waits for the others.
        try await throughStandIn(answerLimit: .seconds(120), { request, a in
            // The first two writes (one request each: both requests out) wait until the others wait.
            if held.withLock({ $0 += 1; return $0 }) <= 2 {
                let deadline = ContinuousClock.now + .seconds(60)
                while !release.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            }
            let made = try await a.create(AnnouncementDraft(title: "Together", body: nil), by: "alice", key: request.headers[.idempotencyKey])
            return Response(status: .created, headers: [.location: "/announcements/\(made.id)", .logSeq: String(made.revision)])
        }) { nodes in
            let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                // Eight: as many as the test's client sends at once (its connections to a host).
                for n in 0..<8 {
                    group.addTask {
                        let answer = try await nodes.nodeB.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(string: #"{"title":"T\#(n)"}"#))
                        return (answer.status, answer.headers[.location])
                    }
                }
                let deadline = ContinuousClock.now + .seconds(60)
                while nodes.forwarder.waitingWrites < 6, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                #expect(nodes.forwarder.waitingWrites == 6, "six writes wait while two requests are out")
                release.withLock { $0 = true }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == .created }, "\(answers)")
            #expect(Set(answers.compactMap(\.1)).count == 8, "each its own announcement: \(answers)")
            #expect(nodes.batches() == [1, 1, 6], "one request each for the first two, then one for the six that waited")
            #expect(nodes.logA.holdsWriterRole && !nodes.logB.holdsWriterRole, "none was made through B")
            #expect(nodes.b.snapshot.seq == 9, "B took each in before answering it")
        }
    }

    @Test("a write with a token whose role writes nothing is refused where it comes, not sent on (where its token would lead the writes sent with it)")
    func notAWriter() async throws {
        try await throughStandIn({ _, _ in Response(status: .created) }) { nodes in
            let auditor = try await nodes.nodeB.execute(
                uri: "/announcements", method: .post, headers: [.authorization: "Bearer ann-secret", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"title":"Audit"}"#)
            )
            #expect(auditor.status == .forbidden, "\(String(buffer: auditor.body))")
            #expect(nodes.batches() == [], "nothing went to the holder")
            #expect(nodes.b.snapshot.seq == 1)
        }
    }

    @Test("the route that takes forwarded writes: a writer's token, their own form, each write through the router with its own token and rights; writes only")
    func forwardedWritesRoute() async throws {
        let table = uniqueTable()
        let (a, _) = try await openNode(table)
        // Alice's, which Bob (an author) may not change.
        _ = try await a.create(AnnouncementDraft(title: "Alice's", body: nil), by: "alice")
        let editors = ServerSettings(host: "127.0.0.1", port: 0, access: Access([
            ("alice", "alice-secret", .editor), ("bob", "bob-secret", .author), ("ann", "ann-secret", .auditor),
        ]))
        try await buildApplication(store: a, settings: editors, logger: quiet).test(.live) { nodeA in
            let form: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: ForwardedWrites.contentType]
            let writes = [
                ForwardedWrites.Write(method: .post, path: "/announcements", fields: alice.merging([.idempotencyKey: "k-1"]), body: ByteBuffer(string: #"{"title":"One"}"#)),
                ForwardedWrites.Write(method: .post, path: "/announcements", fields: [.contentType: "application/json"], body: ByteBuffer(string: #"{"title":"Who"}"#)),
                ForwardedWrites.Write(method: .get, path: "/announcements", fields: alice, body: ByteBuffer()),
                ForwardedWrites.Write(method: .put, path: "/announcements/1", fields: [.authorization: "Bearer bob-secret", .contentType: "application/json"], body: ByteBuffer(string: #"{"title":"Not his"}"#)),
                ForwardedWrites.Write(method: .post, path: "/announcements", fields: alice.merging([.idempotencyKey: "k-1"]), body: ByteBuffer(string: #"{"title":"One"}"#)),
                ForwardedWrites.Write(method: .post, path: "/announcements/1/erase", fields: alice, body: ByteBuffer(string: #"{"reason":"no"}"#)),
            ]
            let answered = try await nodeA.execute(uri: ForwardedWrites.path, method: .post, headers: form, body: ForwardedWrites.encode(writes))
            #expect(answered.status == .ok)
            let answers = try ForwardedWrites.answers(in: answered.body)
            #expect(answers.map(\.status) == [.created, .unauthorized, .badRequest, .forbidden, .created, .badRequest], "\(answers.map { String(buffer: $0.body) })")
            #expect(answers[0].fields[.location] == "/announcements/2" && answers[4].fields[.location] == "/announcements/2", "the key made it once")
            #expect(answers[0].fields[.requestID] != nil && String(buffer: answers[0].body).contains(#""title":"One""#))
            #expect(a.snapshot.seq == 2)
            // The request as a whole: a writer's token, the form, bytes that read.
            let anonymous = try await nodeA.execute(uri: ForwardedWrites.path, method: .post, headers: [.contentType: ForwardedWrites.contentType], body: ForwardedWrites.encode(writes))
            #expect(anonymous.status == .unauthorized)
            let auditor = try await nodeA.execute(uri: ForwardedWrites.path, method: .post, headers: [.authorization: "Bearer ann-secret", .contentType: ForwardedWrites.contentType], body: ForwardedWrites.encode(writes))
            #expect(auditor.status == .forbidden, "an auditor writes nothing")
            let json = try await nodeA.execute(uri: ForwardedWrites.path, method: .post, headers: alice, body: ForwardedWrites.encode(writes))
            #expect(json.status == .unsupportedMediaType)
            let garbled = try await nodeA.execute(uri: ForwardedWrites.path, method: .post, headers: form, body: ByteBuffer(bytes: [1, 0, 1, 0]))
            #expect(garbled.status == .badRequest && String(buffer: garbled.body).contains("write 1's method is cut off"), "\(String(buffer: garbled.body))")
            #expect(a.snapshot.seq == 2, "nothing else was written")
        }
        await a.close()
    }

    @Test("a notice that names an address from a session that does not hold the writer role is not followed: writes go to the holder's own address")
    func spoofedNotice() async throws {
        let table = uniqueTable()
        let (a, b, deadline) = try await nodesFollowingA(table)
        // Another session (any account may notify) names another address, under another tag.
        let settings = try postgresSettings(table)
        let connection = try PostgresLog.connection(settings, id: 3, logger: quiet)
        _ = try await connection.query("SELECT pg_notify('\(unescaped: table)', 'appended http://127.0.0.1:2 deadbeef-0000')", logger: quiet).get()
        try await connection.close().get()
        // B takes the notice in (on its cooperative pool, which a busy machine may leave unrun for
        // seconds): its holder changes.
        while b.writeHolder == "http://127.0.0.1:1", ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(b.writeHolder == nil, "not the spoofed address, and not the earlier one (the last notice named another): writes are made through B")
        #expect(b.writeHolder != "http://127.0.0.1:2")
        // A's next append names its address again, and B follows it.
        _ = try await a.create(AnnouncementDraft(title: "Two", body: nil), by: "alice")
        while b.writeHolder == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(b.writeHolder == "http://127.0.0.1:1")
        await a.close()
        await b.close()
    }

    @Test("a session of another database account that takes the writer role and names itself a node is not followed; one of the nodes' own account is (the check that tells them apart)")
    func impostorOfAnotherAccount() async throws {
        let table = uniqueTable()
        let (a, b, deadline) = try await nodesFollowingA(table)
        let settings = try postgresSettings(table)
        let account = "intruder_" + table
        let admin = try PostgresLog.connection(settings, id: 4, logger: quiet)
        do {
            _ = try await admin.query("CREATE ROLE \(unescaped: account) LOGIN", logger: quiet).get()
        } catch {
            // A PostgreSQL of the tester's own (ANNOUNCEMENTS_TEST_POSTGRES_URL) whose user may not make roles.
            print("ForwardingAPITests.impostorOfAnotherAccount: skipped, the test's PostgreSQL user cannot create a role (\(String(reflecting: error)))")
            try await admin.close().get()
            await a.close()
            await b.close()
            return
        }
        // The role goes with the test, whatever becomes of it.
        let dropRole = { _ = try await admin.query("DROP ROLE IF EXISTS \(unescaped: account)", logger: quiet).get() }
        do {
            for (user, address) in [(account, "http://127.0.0.1:2"), (settings.user, "http://127.0.0.1:3")] {
                var impostorSettings = settings
                impostorSettings.user = user
                let impostor = try PostgresLog.connection(impostorSettings, id: 5, logger: quiet)
                _ = try await impostor.query("SET application_name = 'announcements writer node=deadbeef x'", logger: quiet).get()
                // It waits in line for the role: A, seeing a session wait, gives it up.
                _ = try await impostor.query("SELECT pg_advisory_lock(\(PostgresLog.lockKey(table)))", logger: quiet).get()
                _ = try await impostor.query("SELECT pg_notify('\(unescaped: table)', 'appended \(unescaped: address) deadbeef-0000')", logger: quiet).get()
                // B hears the notice (its holder changes from A's address), then looks at who holds
                // the role (every 250 ms): a second is four looks.
                while b.writeHolder == "http://127.0.0.1:1", ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                if user == account {
                    try await Task.sleep(for: .seconds(1))
                    #expect(b.writeHolder == nil, "another account's session is not taken for a node: writes are made through B")
                } else {
                    while b.writeHolder == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                    #expect(b.writeHolder == address, "a session of the nodes' own account that names a node's tag is taken for that node")
                }
                try await impostor.close().get()
                // A takes the role back with its next write, and names its address again.
                _ = try await a.create(AnnouncementDraft(title: "Back", body: nil), by: "alice")
                while b.writeHolder != "http://127.0.0.1:1", ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            }
        } catch {
            try? await dropRole()
            throw error
        }
        try await dropRole()
        try await admin.close().get()
        await a.close()
        await b.close()
    }

    /// A's and B's stores and logs, B's server and forwarder, and the sizes of the requests with
    /// writes the stand-in got.
    private struct StandIn: Sendable {
        let a: EventStore
        let b: EventStore
        let logA: PostgresLog
        let logB: PostgresLog
        let nodeB: any TestClientProtocol
        let forwarder: WriteForwarder
        let batches: @Sendable () -> [Int]
    }

    /// Two nodes on a table of their own, A holding the writer role and naming as its address a
    /// stand-in server that answers writes with `route` (given A's store): B's writes go there,
    /// waiting `answerLimit` for its answers. `body` runs once B knows the stand-in as the holder.
    private func throughStandIn(
        answerLimit: TimeAmount = WriteForwarder.answerLimit,
        _ route: @escaping @Sendable (Request, EventStore) async throws -> Response,
        _ body: @escaping @Sendable (StandIn) async throws -> Void
    ) async throws {
        let table = uniqueTable()
        let (a, logA) = try await openNode(table)
        let (b, logB) = try await openNode(table)
        // The stand-in takes forwarded writes as the holder does: each one to `route`, all at once.
        let standIn = Router()
        let batches = Mutex<[Int]>([])
        standIn.post(RouterPath(ForwardedWrites.path)) { request, _ in
            let writes = try ForwardedWrites.writes(in: try await request.body.collect(upTo: 1 << 20))
            batches.withLock { $0.append(writes.count) }
            let answers = try await withThrowingTaskGroup(of: (Int, ForwardedWrites.Answer).self) { group in
                for (index, write) in writes.enumerated() {
                    group.addTask {
                        let head = HTTPRequest(method: write.method, scheme: nil, authority: nil, path: write.path, headerFields: write.fields)
                        let answer = try await route(Request(head: head, body: .init(buffer: write.body)), a)
                        return (index, ForwardedWrites.Answer(status: answer.status, fields: answer.headers, body: ByteBuffer()))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            return Response(status: .ok, body: .init(byteBuffer: ForwardedWrites.encode(writes.indices.compactMap { answers[$0] })))
        }
        try await Application(router: standIn, configuration: .init(address: .hostname("127.0.0.1", port: 0))).test(.live) { stuck in
            let address = "http://127.0.0.1:\(stuck.port ?? 0)"
            a.advertise(address)
            try await listening(on: table, sessions: 2)
            let forwarder = WriteForwarder(store: b, maxRequestBytes: settings.maxRequestBytes, waits: WriteForwarder.Waits(answer: answerLimit))
            let router = buildRouter(store: b, settings: settings, forwarder: forwarder)
            // Through AsyncHTTPClient: requests sent together go on connections of their own.
            try await Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: quiet).test(.ahc(.http)) { nodeB in
                _ = try await a.create(AnnouncementDraft(title: "One", body: nil), by: "alice")
                let deadline = ContinuousClock.now + .seconds(60)
                while b.writeHolder == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                #expect(b.writeHolder == address)
                try await body(StandIn(a: a, b: b, logA: logA, logB: logB, nodeB: nodeB, forwarder: forwarder, batches: { batches.withLock { $0 } }))
            }
            await forwarder.shutdown()
        }
        await a.close()
        await b.close()
    }

    /// Returns once `sessions` sessions listen on `table`'s channel: a notice sent before a node's
    /// listener has connected is not heard, and these tests learn the holder from one notice.
    private func listening(on table: String, sessions: Int) async throws {
        let connection = try PostgresLog.connection(try postgresSettings(table), id: 3, logger: quiet)
        let deadline = ContinuousClock.now + .seconds(60)
        var listening = 0
        while listening < sessions, ContinuousClock.now < deadline {
            let result = try await connection.query(
                "SELECT count(*)::int FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND query LIKE \("%" + table + "%")", logger: quiet
            ).get()
            listening = try result.rows.first?.decode(Int.self) ?? 0
            if listening < sessions { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await connection.close().get()
        #expect(listening >= sessions, "the nodes' listeners connected")
    }

    /// A table no other test uses.
    private func uniqueTable() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    private func postgresSettings(_ table: String) throws -> PostgresSettings {
        var postgres = try PostgresSettings(url: ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? "", table: table)
        postgres.tls = .disable
        return postgres
    }

    /// Nodes A and B on `table`, A holding the writer role and advertising
    /// `http://127.0.0.1:1`, B following that address; and a deadline for what the test waits on.
    private func nodesFollowingA(_ table: String) async throws -> (a: EventStore, b: EventStore, deadline: ContinuousClock.Instant) {
        let (a, logA) = try await openNode(table)
        let (b, _) = try await openNode(table)
        a.advertise("http://127.0.0.1:1")
        // B hears the notices once its listener has connected (a notice sent before is not
        // heard): A appends until B names A's address.
        let deadline = ContinuousClock.now + .seconds(60)
        while b.writeHolder == nil, ContinuousClock.now < deadline {
            _ = try await a.create(AnnouncementDraft(title: "One", body: nil), by: "alice")
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(b.writeHolder == "http://127.0.0.1:1" && logA.holdsWriterRole)
        return (a, b, deadline)
    }

    private func openNode(_ table: String) async throws -> (EventStore, PostgresLog) {
        let (log, replay) = try await PostgresLog.open(try postgresSettings(table), alone: false, logger: quiet)
        let store = try await EventStore.open(log: log, replay: replay, rules: ValidationRules(), seed: [], logger: quiet)
        return (store, log)
    }
}
