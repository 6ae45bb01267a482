import Foundation
import Testing


/// A bare HTTP/1.1 client on a socket, for a response that never ends: it sends one GET and reads
/// what has arrived so far.
final class StreamingConnection {
    private let connection: RawConnection
    private(set) var received = ""
    /// Whether the server has closed the connection.
    private(set) var isClosed = false

    init(port: Int, path: String, headers: [String: String]) throws {
        connection = try RawConnection(port: port)
        let head = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1"] + headers.map { "\($0.key): \($0.value)" }).joined(separator: "\r\n") + "\r\n\r\n"
        connection.send(head)
    }

    /// Reads until `received` satisfies `done` or `seconds` pass (generous: CI runs beside busy
    /// processes, and a read that is done returns at once); returns whether it did.
    @discardableResult
    func read(for seconds: Double = 60, until done: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done(received), !isClosed, Date() < deadline {
            guard let chunk = await connection.read() else {
                isClosed = true
                break
            }
            received += String(decoding: chunk, as: UTF8.self)
        }
        if !done(received), !isClosed {
            let rest = connection.arrived()
            received += String(decoding: rest.bytes, as: UTF8.self)
            isClosed = rest.closed
        }
        return done(received)
    }
}

@Suite struct EventStreamTests {
    static let config = "log: events/announcements.jsonl\ntokens:\n  alice: alice-secret\n  audrey: {token: audrey-secret, role: auditor}\nseed:\n  - title: One\n  - title: Two\n"

    /// The `id:` lines of a stream, in order (the chunked framing's "\r\n" is one Character in
    /// Swift, so it is made a plain newline first).
    static func ids(_ text: String) -> [Int] {
        text.replacing("\r\n", with: "\n").split(separator: "\n").compactMap { $0.hasPrefix("id: ") ? Int($0.dropFirst(4)) : nil }
    }

    @Test("streams name each event's type, also for hand-made lines laid out differently, and streams at one place get the same bytes")
    func handMadeLines() async throws {
        let folder = try makeFolder(config: "log: events/announcements.jsonl\ntokens:\n  audrey: {token: audrey-secret, role: auditor}\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/events", withIntermediateDirectories: true)
        let lines = [
            #"{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00.000Z","by":"seed","data":{"title":"One"}}"#,
            #"{"type":"edited","seq":2,"id":1,"at":"2026-11-21T09:31:00.000Z","by":"bob","data":{"title":"Uno"}}"#,
            #"{ "seq": 3, "type": "deleted", "id": 1, "at": "2026-11-21T09:32:00.000Z", "by": "carol" }"#,
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: folder + "/events/announcements.jsonl", atomically: true, encoding: .utf8)
        let server = try await ServerProcess(in: folder)
        let streams = try (0..<2).map { _ in
            try StreamingConnection(port: server.port, path: "/events", headers: ["Accept": "text/event-stream", "Authorization": "Bearer audrey-secret"])
        }
        for stream in streams {
            #expect(await stream.read { Self.ids($0) == [1, 2, 3] })
            let text = stream.received.replacing("\r\n", with: "\n")
            for (seq, type) in [(1, "created"), (2, "edited"), (3, "deleted")] {
                #expect(text.contains("id: \(seq)\nevent: \(type)\ndata: \(lines[seq - 1])\n\n"))
            }
        }
        // Without an auditor's token, the public form: made from the parsed line when it is laid out otherwise.
        let anyone = try StreamingConnection(port: server.port, path: "/events", headers: ["Accept": "text/event-stream"])
        #expect(await anyone.read { Self.ids($0) == [1, 2, 3] })
        let text = anyone.received.replacing("\r\n", with: "\n")
        for (seq, type, minute) in [(1, "created", 30), (2, "edited", 31), (3, "deleted", 32)] {
            #expect(text.contains(#"id: \#(seq)\#nevent: \#(type)\#ndata: {"seq":\#(seq),"type":"\#(type)","id":1,"at":"2026-11-21T09:\#(minute):00.000Z"}\#n\#n"#))
        }
        #expect(!text.contains("Uno") && !text.contains("bob"))
        #expect(await server.stopped() == 0)
    }

    @Test("GET /events as text/event-stream: stored events after `after`, then each new one, with id, event and data")
    func follows() async throws {
        let folder = try makeFolder(config: Self.config)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let stream = try StreamingConnection(port: server.port, path: "/events?after=1", headers: ["Accept": "text/event-stream"])
        #expect(await stream.read { Self.ids($0) == [2] })
        let head = stream.received.lowercased()
        #expect(head.contains("content-type: text/event-stream"))
        // No cache keeps it, and no buffering proxy holds it back (nginx's default config did).
        #expect(head.contains("cache-control: no-store") && head.contains("x-accel-buffering: no"), "\(head.prefix(400))")
        let posted = try await CLI.run(["post", "--title", "Live", "--server", server.url, "--token", "alice-secret"])
        #expect(posted.status == 0)
        #expect(await stream.read { Self.ids($0) == [2, 3] })
        #expect(stream.received.contains("id: 3\nevent: created\ndata: {\"seq\":3,\"type\":\"created\",\"id\":3,"))
        #expect(!stream.received.contains("Live") && !stream.received.contains("alice"), "without a token, the public form: no text, no writer")

        // Reconnecting with Last-Event-ID resumes after it: nothing missed, nothing repeated.
        _ = try await CLI.run(["delete", "1", "--server", server.url, "--token", "alice-secret"])
        let resumed = try StreamingConnection(port: server.port, path: "/events", headers: ["Accept": "text/event-stream", "Last-Event-ID": "3"])
        #expect(await resumed.read { Self.ids($0) == [4] })
        #expect(resumed.received.contains("id: 4\nevent: deleted\n"))
        #expect(await stream.read { Self.ids($0) == [2, 3, 4] }, "the first stream got the delete too")

        // An open stream does not hold up a graceful shutdown.
        #expect(await server.stopped() == 0)
        await stream.read(for: 30) { _ in false }
        #expect(stream.isClosed, "the stream ended with the server")
    }

    @Test("an idle stream sends a heartbeat comment every feed_heartbeat_seconds")
    func heartbeat() async throws {
        let folder = try makeFolder(config: Self.config + "feed_heartbeat_seconds: 1\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let stream = try StreamingConnection(port: server.port, path: "/events?after=2", headers: ["Accept": "text/event-stream"])
        // Two heartbeats (about 2 seconds); more may come in one read on a busy machine.
        #expect(await stream.read { $0.components(separatedBy: ": heartbeat\n\n").count >= 3 }, "heartbeats on an idle stream")
        #expect(Self.ids(stream.received) == [], "and no events")
    }

    @Test("history --follow --server prints the feed's events as they happen, filtered")
    func historyFollow() async throws {
        let folder = try makeFolder(config: Self.config)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let follower = try ChildProcess(
            CLI.binary.path, ["history", "--follow", "--server", server.url, "--by", "alice", "--token", "audrey-secret"],
            environment: ProcessInfo.processInfo.environment, error: .null
        )
        defer {
            // Reaped on a thread of its own: a `defer` that waited would hold a cooperative thread.
            follower.terminate()
            Thread { follower.waitUntilExit() }.start()
        }
        // A follower that prints nothing for two minutes is killed: its output ends, and the test fails.
        let silent = DispatchWorkItem { follower.signal(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: silent)
        defer { silent.cancel() }
        var printed = ""
        func readLines(_ count: Int) async throws {
            let wanted = count - printed.filter({ $0 == "\n" }).count
            // Read on a thread of its own: the read blocks until the follower prints.
            let bytes = try await offPool {
                var bytes: [UInt8] = []
                var lines = 0
                while lines < wanted, let byte = follower.output.flatMap(readByte) {
                    bytes.append(byte)
                    if byte == UInt8(ascii: "\n") { lines += 1 }
                }
                return bytes
            }
            printed += String(decoding: bytes, as: UTF8.self)
        }
        try await readLines(1)
        #expect(printed.hasPrefix("SEQ  TIME"))
        let posted = try await CLI.run(["post", "--title", "Fire drill", "--server", server.url, "--token", "alice-secret"])
        #expect(posted.status == 0)
        try await readLines(2)
        let row = printed.split(separator: "\n").last.map(String.init) ?? ""
        #expect(row.hasPrefix("3    20"), "\(printed)")
        #expect(row.hasSuffix("  created  alice   3    \"Fire drill\" (no body)"), "\(printed)")
        #expect(!printed.contains("seed"), "the seed's events are filtered out by --by alice")
        // An edit says what it replaced, from the events the follow saw; one that started after
        // them, only what became of it.
        let edited = try await CLI.run(["edit", "3", "--title", "Fire drill moved", "--server", server.url, "--token", "alice-secret"])
        #expect(edited.status == 0, "\(edited.stderr)")
        try await readLines(3)
        #expect(printed.split(separator: "\n").last?.hasSuffix("  edited   alice   3    title \"Fire drill\" → \"Fire drill moved\"") == true, "\(printed)")
        let later = try await CLI.run(["history", "--follow", "--server", server.url, "--since", "4", "--until", "4", "--token", "audrey-secret"], timeout: 60)
        #expect(later.status == 0, "\(later.stderr)")
        #expect(later.stdout.split(separator: "\n").last?.hasSuffix("  edited   alice   3    title → \"Fire drill moved\"") == true, "\(later.stdout)")

        // --until ends the follow at its seq, also when the other filters drop that event.
        let bounded = try await CLI.run(["history", "--follow", "--server", server.url, "--by", "seed", "--until", "3", "--format", "jsonl", "--token", "audrey-secret"], timeout: 60)
        #expect(bounded.status == 0, "\(bounded.stderr)")
        #expect(bounded.stdout.split(separator: "\n").map { $0.contains(#""by":"seed""#) } == [true, true], "\(bounded.stdout)")
        // A --since beyond the server's log (restored from an older backup) is an error at once.
        let beyond = try await CLI.run(["history", "--follow", "--server", server.url, "--since", "10"], timeout: 60)
        #expect(beyond.status == 1, "\(beyond.stderr)")
        #expect(beyond.stderr == "error: the server's log ends at seq 4, before seq 10 where this follow starts: it may have been restored from an older backup; follow with --since 5 for what comes next, or without --since to read it all again\n")
        #expect(beyond.stdout.isEmpty, "not even the table's header: \(beyond.stdout)")
        // Without an auditor's token the server sends the public form, which names no writer: an error at once.
        for token in [[], ["--token", "alice-secret"]] {
            let publicOnly = try await CLI.run(["history", "--follow", "--server", server.url] + token, timeout: 60)
            #expect(publicOnly.status == 77, "\(publicOnly.stderr)")
            #expect(publicOnly.stderr.contains("history --follow needs an auditor's or an admin's token"), "\(publicOnly.stderr)")
            let given = token.isEmpty ? "error: without a token, the server sends the feed's public form" : "error: the server sends this token the feed's public form"
            #expect(publicOnly.stderr.hasPrefix(given), "said of the token sent, or of none: \(publicOnly.stderr)")
            #expect(publicOnly.stdout.isEmpty, "\(publicOnly.stdout)")
        }
        // An unreachable server is an error at once, not an endless wait.
        let nowhere = try await CLI.run(["history", "--follow", "--server", "http://127.0.0.1:1"], timeout: 60)
        #expect(nowhere.status == 69 && nowhere.stderr.contains("cannot reach the server"), "\(nowhere.stderr)")
    }
}
