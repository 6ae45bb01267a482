import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import PostgresNIO
import Synchronization
import Testing
@testable import AnnouncementsPostgres

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Three `announcements serve` processes on one PostgreSQL table, as three machines behind a load
/// balancer would run them.
@Suite(.enabled(
    if: !(ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? "").isEmpty,
    "ANNOUNCEMENTS_TEST_POSTGRES_URL is not set: run `make test` (scripts/test.sh starts a throwaway PostgreSQL)"
))
struct MultiNodeTests {
    @Test("writes spread over three nodes: each reads its writes from any other with Min-Seq, deletes through the third with the first's ETag, and all agree on list, detail, history and events")
    func writesSpread() async throws {
        let folder = try makeFolder(config: "")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try PostgresCLITests.postgresConfig(in: folder)
        let servers = try await Self.startNodes(3, in: folder, config: config)
        defer { for server in servers { server.stop() } }
        let nodes = servers.map { Node(url: $0.url) }

        let lastSeq = Shared(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<6 {
                group.addTask {
                    for write in 0..<8 {
                        let (via, other, third) = (nodes[(client + write) % 3], nodes[(client + write + 1) % 3], nodes[(client + write + 2) % 3])
                        let created = try await via.send("POST", "/announcements", body: #"{"title":"c\#(client)-\#(write)","body":"<p>from \#(via.url)</p>"}"#)
                        #expect(created.status == 201, "\(created.text)")
                        let id = try #require(created.json?["id"] as? Int)
                        let seq = try #require(created.logSeq)
                        lastSeq.raise(to: seq)
                        // Read your write through another node.
                        let read = try await other.send("GET", "/announcements/\(id)", headers: ["Min-Seq": "\(seq)", "Accept-Version": "1.0"])
                        #expect(read.status == 200 && read.json?["title"] as? String == "c\(client)-\(write)", "\(read.status) \(read.text)")
                        #expect(read.etag != nil && read.etag == created.etag, "every node names the revision's line alike")
                        if write % 4 == 3 {
                            // With the ETag the first node answered, through a node that may not
                            // have taken the line in yet: it decides once it has.
                            let deleted = try await third.send("DELETE", "/announcements/\(id)", headers: ["If-Match": created.etag ?? ""])
                            #expect(deleted.status == 204, "\(deleted.text)")
                            lastSeq.raise(to: try #require(deleted.logSeq))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        // 48 creates and 12 deletes, in one log; every node serves the same of it.
        let seq = lastSeq.value
        #expect(seq == 60)
        for path in ["/announcements?max=100", "/v1/announcements?max=100&sort=title", "/announcements/1", "/announcements/4/history", "/events?after=0&limit=100"] {
            var bodies: Set<String> = []
            for node in nodes {
                let answer = try await node.send("GET", path, headers: ["Min-Seq": "\(seq)"])
                #expect(answer.status == 200, "\(path): \(answer.status) \(answer.text)")
                bodies.insert(answer.text)
            }
            #expect(bodies.count == 1, "\(path) differs between nodes")
        }
        // A seq no node has reached: a 503 after the node's wait, naming both seqs.
        let ahead = try await nodes[1].send("GET", "/announcements", headers: ["Min-Seq": "\(seq + 1000)"], retrying: false)
        #expect(ahead.status == 503 && ahead.headers["retry-after"] == "1", "\(ahead.status) \(ahead.text)")
        #expect(ahead.json?["minSeq"] as? Int == seq + 1000 && ahead.json?["lastSeq"] as? Int == seq, "\(ahead.text)")
        let events = try await nodes[2].send("GET", "/events?after=0&limit=100", headers: ["Min-Seq": "\(seq)"])
        #expect(events.text.components(separatedBy: #""seq":"#).count - 1 == 60)
        let verified = try await CLI.run(["verify", "--config", config], in: folder)
        #expect(verified.status == 0 && verified.stdout.contains(": sound"), "\(verified.stdout)\(verified.stderr)")
    }

    @Test("kill -9 of the node holding the writer role, mid-load, writes spread over all three: the others serve reads at once, clients retry on them with their idempotency keys, and no acknowledged write is lost or doubled")
    func writingNodeKilled() async throws {
        let folder = try makeFolder(config: "")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try PostgresCLITests.postgresConfig(in: folder)
        let servers = try await Self.startNodes(3, in: folder, config: config)
        defer { for server in servers where server.process.isRunning { server.stop() } }
        let nodes = servers.map { Node(url: $0.url) }

        // Clients spread their writes over the three nodes, and move on to the next node when one
        // fails them, sending the same write again with the same key.
        let acknowledged = Shared<[String]>([])
        let victim = Shared<Int?>(nil)
        let retriedAfterKill = Shared(0)
        // Past 60 acknowledged writes, clients wait for the kill: then some of them are bound
        // to meet the dead node, however the machine schedules the tasks.
        let killDone = Shared(false)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<9 {
                group.addTask {
                    var target = client % 3
                    for write in 0..<22 {
                        let title = "c\(client)-\(write)"
                        while acknowledged.value.count >= 60, !killDone.value { try await Task.sleep(for: .milliseconds(5)) }
                        var tries = 0
                        while true {
                            tries += 1
                            let answer = try? await nodes[target].send(
                                "POST", "/announcements", headers: ["Idempotency-Key": title], body: #"{"title":"\#(title)"}"#, timeout: 20
                            )
                            if answer?.status == 201 { break }
                            // Refused (the node is gone) or not acknowledged: try the next node.
                            if victim.value != nil { retriedAfterKill.update { $0 += 1 } }
                            target = (target + 1) % 3
                            #expect(tries < 30, "\(title) was never acknowledged: \(answer.map { "\($0.status) \($0.text)" } ?? "no answer")")
                            if tries >= 30 { return }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        acknowledged.update { $0.append(title) }
                    }
                }
            }
            group.addTask {
                // However this task ends, the clients go on.
                defer { killDone.update { $0 = true } }
                let deadline = ContinuousClock.now + .seconds(120)
                while acknowledged.value.count < 60 {
                    guard ContinuousClock.now < deadline else {
                        Issue.record("60 writes were not acknowledged within 120 s: nothing was killed")
                        return
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                // The node whose session holds the writer role now (each connection names its process).
                let holder = try await Self.writerRoleHolder(config: config)
                let index = try #require(servers.firstIndex { $0.process.processIdentifier == holder }, "pid \(holder) is none of the nodes'")
                victim.update { $0 = index }
                kill(holder, SIGKILL)
                killDone.update { $0 = true }
                // The others serve reads at once.
                for node in nodes.indices where node != index {
                    let read = try await nodes[node].send("GET", "/announcements?max=1")
                    #expect(read.status == 200)
                }
            }
            try await group.waitForAll()
        }
        let killed = try #require(victim.value)
        let victimProcess = servers[killed].process
        try await offPool { victimProcess.waitUntilExit() }
        #expect(servers[killed].process.terminationReason == .uncaughtSignal)
        #expect(retriedAfterKill.value > 0, "some writes met the dead node")
        let titles = acknowledged.value
        #expect(titles.count == 198)

        // Every acknowledged write is there once, on both survivors.
        let survivors = nodes.indices.filter { $0 != killed }.map { nodes[$0] }
        let head = try await survivors[0].send("POST", "/announcements", body: #"{"title":"last"}"#)
        let seq = try #require(head.logSeq)
        for node in survivors {
            var seen: [String] = []
            for offset in stride(from: 0, to: 199, by: 100) {
                let page = try await node.send("GET", "/announcements?max=100&offset=\(offset)", headers: ["Min-Seq": "\(seq)"])
                #expect(page.status == 200)
                #expect(page.headers["x-total-count"] == "199")
                let items = try #require(try JSONSerialization.jsonObject(with: Data(page.text.utf8)) as? [[String: Any]])
                seen += items.compactMap { $0["title"] as? String }
            }
            #expect(seen.count == 199)
            #expect(Set(seen) == Set(titles + ["last"]), "every acknowledged write, once")
        }
        let verified = try await CLI.run(["verify", "--config", config], in: folder)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
    }

    @Test("SIGSTOP of the node holding the writer role: writes through the others succeed within 10 s of being sent, their /health says writes wait meanwhile and ok after; on SIGCONT the stopped node's pending writes are in the log or a retryable 503, its next write goes through, and the chain verifies")
    func writingNodeStopped() async throws {
        let folder = try makeFolder(config: "")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let config = try PostgresCLITests.postgresConfig(in: folder)
        let servers = try await Self.startNodes(3, in: folder, config: config)
        let stopped = Shared<Int?>(nil)
        defer {
            if let index = stopped.value { servers[index].process.signal(SIGCONT) }
            for server in servers { server.stop() }
        }
        let nodes = servers.map { Node(url: $0.url) }
        let acknowledged = Shared<[String]>([])
        // The first node takes the role with a few writes, and keeps it.
        for write in 0..<5 {
            let answer = try await nodes[0].send("POST", "/announcements", headers: ["Idempotency-Key": "a-\(write)"], body: #"{"title":"a-\#(write)"}"#)
            #expect(answer.status == 201, "\(answer.text)")
            acknowledged.update { $0.append("a-\(write)") }
        }
        let holder = try await Self.writerRoleHolder(config: config)
        let index = try #require(servers.firstIndex { $0.process.processIdentifier == holder })
        // Writes through the holder go on as it stops: some are in its hands then, the others
        // wait in its socket; all are answered once it goes on.
        let resumed = Shared(false)
        let answered = Shared<[(title: String, status: Int, text: String)]>([])
        let writers = (0..<3).map { client in
            Task {
                var write = 0
                while !resumed.value {
                    let title = "holder-\(client)-\(write)"
                    let answer = try await nodes[index].send("POST", "/announcements", headers: ["Idempotency-Key": title], body: #"{"title":"\#(title)"}"#, timeout: 120)
                    answered.update { $0.append((title, answer.status, answer.text)) }
                    write += 1
                }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        // A write through another node is timed from when it was sent (after this) to when that
        // node decided it (its event's time, on the same clock), so that it counts what the nodes
        // took, not how late this busy test process sent it (its cooperative pool may run a task
        // seconds late) or heard of its answer.
        let stoppedAt = Date()
        servers[index].process.signal(SIGSTOP)
        stopped.update { $0 = index }
        let started = ContinuousClock.now
        let others = nodes.indices.filter { $0 != index }

        // Writes through the others, and /health on the first of them until the first write is
        // acknowledged, asked from a thread of the test's own (a busy machine's cooperative pool
        // may not run a task in the seconds that matter).
        let firstWrite = Shared<Duration?>(nil)
        let waits = Shared<[(title: String, decided: Date, sent: Date)]>([])
        let healthSeen = Shared<[String]>([])
        let watched = servers[others[0]].port
        let watcher = Thread {
            while firstWrite.value == nil, ContinuousClock.now - started < .seconds(60) {
                if let connection = try? RawConnection(port: watched) {
                    connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    let answer = connection.readUntilClosedBlocking(seconds: 5)
                    healthSeen.update { $0.append(String(answer.split(separator: "\r\n").first ?? "") + " " + (answer.components(separatedBy: "\r\n\r\n").last ?? "")) }
                }
                usleep(100_000)
            }
        }
        watcher.start()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (client, node) in others.enumerated() {
                group.addTask {
                    for write in 0..<4 {
                        let title = "other-\(client)-\(write)"
                        let sent = Date()
                        // In v3, whose answer says when the write was decided (`createdAt`).
                        let answer = try await nodes[node].send("POST", "/v3/announcements", headers: ["Idempotency-Key": title], body: #"{"title":"\#(title)"}"#, timeout: 60)
                        #expect(answer.status == 201, "\(title): \(answer.status) \(answer.text)")
                        guard answer.status == 201 else { return }
                        let createdAt = try #require((answer.json?["createdAt"] as? String).flatMap { try? Date($0, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) })
                        waits.update { $0.append((title, createdAt, sent)) }
                        acknowledged.update { $0.append(title) }
                        firstWrite.update { $0 = $0 ?? ContinuousClock.now - started }
                    }
                }
            }
            try await group.waitForAll()
        }
        let heard = try #require(firstWrite.value)
        #expect(waits.value.count == 2 * 4, "every write through the others acknowledged")
        for wait in waits.value {
            let waited = wait.decided.timeIntervalSince(wait.sent)
            let late = wait.sent.timeIntervalSince(stoppedAt)
            #expect(waited < 10, "\(wait.title) was decided \(waited) s after it was sent, \(late) s after the holder stopped (this test heard of the first write after \(heard))")
        }
        #expect(healthSeen.value.contains { $0.hasPrefix("HTTP/1.1 503 ") && $0.contains("writes wait for the writer role") }, "\(healthSeen.value)")
        for node in others {
            let health = try await nodes[node].send("GET", "/health")
            #expect(health.status == 200, "\(health.text)")
        }

        servers[index].process.signal(SIGCONT)
        stopped.update { $0 = nil }
        resumed.update { $0 = true }
        for writer in writers { try await writer.value }
        // A 2xx only for a write that is in the log (checked below); else a retryable 503.
        for answer in answered.value {
            #expect([201, 503].contains(answer.status), "\(answer.title): \(answer.status) \(answer.text)")
            if answer.status == 201 { acknowledged.update { $0.append(answer.title) } }
        }
        // Its next write takes the role again (a retry at most, as a client would), and its health clears.
        var last: Node.Answer?
        for _ in 0..<5 where last?.status != 201 {
            last = try await nodes[index].send("POST", "/announcements", headers: ["Idempotency-Key": "after"], body: #"{"title":"after"}"#)
            if last?.status != 201 { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(last?.status == 201, "\(last?.text ?? "")")
        acknowledged.update { $0.append("after") }
        let seq = try #require(last?.logSeq)
        // (`/health` looks at no Min-Seq: a read waits for the seq first.)
        let caughtUp = try await nodes[index].send("GET", "/announcements?max=1", headers: ["Min-Seq": "\(seq)"])
        #expect(caughtUp.status == 200, "\(caughtUp.text)")
        let health = try await nodes[index].send("GET", "/health")
        #expect(health.status == 200, "\(health.text)")

        // Every acknowledged write is in the log once, on every node; the chain verifies.
        for node in nodes {
            var titles: [String] = []
            while true {
                let page = try await node.send("GET", "/announcements?max=100&offset=\(titles.count)", headers: ["Min-Seq": "\(seq)"])
                let items = try #require(try JSONSerialization.jsonObject(with: Data(page.text.utf8)) as? [[String: Any]])
                if items.isEmpty { break }
                titles += items.compactMap { $0["title"] as? String }
            }
            #expect(titles.count == Set(titles).count, "nothing twice: \(titles)")
            #expect(Set(acknowledged.value).isSubset(of: Set(titles)), "every acknowledged write: \(titles)")
        }
        let verified = try await CLI.run(["verify", "--config", config], in: folder)
        #expect(verified.status == 0 && verified.stdout.contains(": sound"), "\(verified.stdout)\(verified.stderr)")
    }

    /// `count` servers on `config`, started one after another (those started are stopped when a
    /// later one fails to start).
    static func startNodes(_ count: Int, in folder: String, config: String) async throws -> [ServerProcess] {
        var servers: [ServerProcess] = []
        do {
            for _ in 0..<count { servers.append(try await ServerProcess(in: folder, arguments: ["serve", "--port", "0", "--config", config])) }
        } catch {
            for server in servers { server.stop() }
            throw error
        }
        return servers
    }

    /// The process whose writer connection holds the writer role on the config's table now.
    static func writerRoleHolder(config: String) async throws -> pid_t {
        let table = try #require(try String(contentsOfFile: config, encoding: .utf8).split(separator: "\n")
            .first { $0.contains("table:") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces))
        var settings = try PostgresSettings(url: ProcessInfo.processInfo.environment["ANNOUNCEMENTS_TEST_POSTGRES_URL"] ?? "", table: table)
        settings.tls = .disable
        let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        let admin = try await PostgresLog.connect(settings, id: 99, logger: quiet)
        defer { admin.close().whenComplete { _ in withExtendedLifetime(admin) {} } }
        for _ in 0..<200 {
            let rows = try await admin.query("""
                SELECT a.application_name FROM (\(unescaped: PostgresLog.roleLocks(table))) AS role JOIN pg_stat_activity a ON a.pid = role.pid
                WHERE role.granted
                """, logger: quiet)
            for try await name in rows.decode(String.self) {
                if let pid = name.split(separator: " ").first(where: { $0.hasPrefix("pid=") }).flatMap({ pid_t($0.dropFirst(4)) }) { return pid }
            }
            // Between two holders: look again.
            try await Task.sleep(for: .milliseconds(5))
        }
        throw PostgresSettingsError("no process held the writer role")
    }
}

/// One running node, and the requests a test sends it (with the writer's token).
struct Node: Sendable {
    let url: String

    struct Answer {
        var status: Int
        var text: String
        var headers: [String: String]

        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] }
        /// By lowercased name.
        var logSeq: Int? { headers["log-seq"].flatMap { Int($0) } }
        var etag: String? { headers["etag"] }
    }

    /// One request; a read with `Min-Seq` that a node answers 503 (the seq has not reached it in
    /// the node's own wait, which a busy machine can outlast) is asked again after its
    /// `Retry-After`, as docs/http-api.md tells clients to, up to 30 times (unless not `retrying`).
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil, timeout: TimeInterval = 60, retrying: Bool = true) async throws -> Answer {
        var answer = try await sendOnce(method, path, headers: headers, body: body, timeout: timeout)
        var retries = 0
        while retrying, answer.status == 503, headers["Min-Seq"] != nil, let wait = answer.headers["retry-after"].flatMap(Int.init), retries < 30 {
            try await Task.sleep(for: .seconds(wait))
            answer = try await sendOnce(method, path, headers: headers, body: body, timeout: timeout)
            retries += 1
        }
        return answer
    }

    private func sendOnce(_ method: String, _ path: String, headers: [String: String], body: String?, timeout: TimeInterval) async throws -> Answer {
        var request = URLRequest(url: URL(string: url + path)!, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer secret-token", forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(status: http?.statusCode ?? 0, text: String(decoding: data, as: UTF8.self), headers: fields)
    }
}

/// A value the tasks of a test share.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value { mutex.withLock { $0 } }

    func update(_ change: (inout Value) -> Void) {
        mutex.withLock { change(&$0) }
    }
}

extension Shared where Value == Int {
    func raise(to candidate: Int) {
        update { $0 = Swift.max($0, candidate) }
    }
}
