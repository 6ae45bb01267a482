import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The server against clients that misbehave: idle, slow, stalled, too many, or not speaking HTTP.
/// Each runs a real server with short timeouts (seconds), and each wait is bounded.
@Suite struct ConnectionTests {
    /// A folder whose config sets the `http:` section to `http`.
    static func folder(http: String, extra: String = "") throws -> String {
        try makeFolder(config: "log: events/announcements.jsonl\nseed:\n  - title: One\nfeed_heartbeat_seconds: 1\n\(extra)http:\n\(http)")
    }

    /// How many connections the server cut off for `reason`, as its `/metrics` says (asked over
    /// `connection`, or a new one).
    static func cuts(_ reason: String, server: ServerProcess, over connection: RawConnection? = nil) async throws -> Int? {
        await metric(#"http_connections_cut_total{reason=""# + reason + #""}"#, over: try connection ?? RawConnection(port: server.port))
    }

    /// How many connections the server has open, as its `/metrics` says (asked over `connection`).
    static func openConnections(over connection: RawConnection) async -> Int? {
        await metric("http_connections_open", over: connection)
    }

    /// The value of the sample `name` (with its labels) in the server's `/metrics`, asked over
    /// `connection`, as a whole number.
    static func metric(_ name: String, over connection: RawConnection) async -> Int? {
        #expect(connection.send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
        let text = await connection.readResponse(seconds: 10)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespacesAndNewlines)) }.map { Int($0) }
    }

    @Test("a connection that sends nothing is closed after the idle timeout")
    func idle() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 2\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let started = Date()
        let (_, closed) = await connection.readUntilClosed(seconds: 20)
        #expect(closed, "the server closed the idle connection")
        #expect(Date().timeIntervalSince(started) > 1.5, "not before the idle timeout")
        #expect(try await Self.cuts("idle_timeout", server: server) == 1, "counted in the metrics")
    }

    @Test("a request head sent a byte at a time is cut off at the read timeout", arguments: [
        // slowloris: a head that never ends
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ",
        // a stalled upload: a whole head, then a body that trickles
        "POST /announcements HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"title\":\"",
    ])
    func slowRequest(start: String) async throws {
        // The idle timeout is long: only the read timeout can close these.
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n  read_timeout_seconds: 2\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.send(start))
        let deadline = Date().addingTimeInterval(20)
        var closed = false
        while !closed, Date() < deadline {
            // One byte every quarter of a second keeps the connection from ever being idle.
            closed = !connection.send("a")
            if !closed { closed = await connection.readUntilClosed(seconds: 0.25).closed }
        }
        #expect(closed, "the server cut the slow request off")
        #expect(try await Self.cuts("read_timeout", server: server) == 1, "counted in the metrics")
        #expect(try await Self.cuts("bad_request", server: server) == 0, "once: the head it cut short is not a bad request too")
    }

    @Test("an event stream outlives the idle timeout: its heartbeats keep it open")
    func streamNotIdle() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 1\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.send("GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"))
        // Four idle timeouts at least, and on until a heartbeat came (a loaded machine may start
        // the stream late: what counts is that it is never closed, and that heartbeats come).
        var text = ""
        var closed = false
        let start = Date()
        while !closed, Date().timeIntervalSince(start) < 20, Date().timeIntervalSince(start) < 4 || !text.contains(": heartbeat") {
            let read = await connection.readUntilClosed(seconds: 1)
            text += read.text
            closed = read.closed
        }
        #expect(!closed, "four idle timeouts later the stream is still open")
        #expect(text.contains(": heartbeat"))
    }

    @Test("an event stream whose client stops reading is closed once it has been left unread for the idle timeout")
    func unreadStream() async throws {
        #if os(Linux)
        // More events than the socket buffers of a client that reads nothing hold: 6 MB (Linux
        // grows a connection's send buffer up to net.ipv4.tcp_wmem's last figure, 4 MB by default).
        let (folder, server) = try await Self.serverOfLargeEvents(megabytes: 6, idleTimeout: 2)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        defer { server.stop() }
        let reader = try RawConnection(port: server.port, receiveBuffer: 4096)
        #expect(reader.send(Self.auditorsStreamRequest))
        // Read nothing, and watch the server's end of the connection: it closes it (leaving the
        // established state) while its output waits, unread. Reading would let the stream go on.
        let deadline = Date().addingTimeInterval(60)
        var state = try Self.tcpState(localPort: server.port, remotePort: reader.localPort)
        while state == Self.established, Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = try Self.tcpState(localPort: server.port, remotePort: reader.localPort)
        }
        #expect(state != Self.established, "the server closed the stream its client left unread")
        #else
        print("watching the server's end of a connection reads /proc/net/tcp, which only Linux has: skipped")
        #endif
    }

    @Test("a client that reads a long answer slowly, but reads, is not cut as unread, however long it takes")
    func slowReaderKept() async throws {
        #if os(Linux)
        // 12 MB of events: the first page (8 MB) is more than the socket buffers hold.
        let (folder, server) = try await Self.serverOfLargeEvents(megabytes: 12, idleTimeout: 3)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        defer { server.stop() }
        // About 1 MB a second, for more than twice the idle timeout: the server's output stays
        // unsent (its channel unwritable) for longer than the idle timeout, and shrinks all along
        // (the server sees it shrink each time its socket takes more: a third of its send buffer,
        // which Linux grows to 4 MB, freed). Read on a thread of its own, which keeps its pace
        // however busy the cooperative pool is. Whether the server closed the connection is read
        // from its end of it (what it sent before closing would still reach this reader): a state
        // other than established. (A read of /proc/net/tcp while many sockets come and go can miss
        // an entry: a connection not found is looked for again.)
        let port = server.port
        let (started, received, closing, seconds) = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Int, String?, Double), Never>) in
            Thread {
                guard let reader = try? RawConnection(port: port, receiveBuffer: 4096), reader.send(Self.auditorsStreamRequest) else {
                    return continuation.resume(returning: (false, 0, nil, 0))
                }
                // The stream's first bytes (a busy machine takes seconds to read and frame the page).
                var received = 0
                let opening = Date()
                while received < 100_000, Date().timeIntervalSince(opening) < 60 {
                    let (bytes, closed) = reader.arrived()
                    if closed { break }
                    received += bytes.count
                    if bytes.isEmpty { usleep(10_000) }
                }
                guard received >= 100_000 else { return continuation.resume(returning: (false, received, nil, 0)) }
                received = 0
                var closing: String?
                let start = Date()
                // At least 7 s (over twice the idle timeout) and 2 MB: a server slowed by a busy
                // machine is read from longer (a minute at most), never cut short by the clock.
                while closing == nil, Date().timeIntervalSince(start) < 60, Date().timeIntervalSince(start) < 7 || received < 2_000_000 {
                    if Double(received) > Date().timeIntervalSince(start) * 1_000_000 {
                        usleep(20_000)
                    } else {
                        // A few KB at a time: all that has arrived can be megabytes, the
                        // server refilling the socket as fast as this drains it.
                        let (bytes, closed) = reader.arrived(atMost: 16_384)
                        received += bytes.count
                        if closed { closing = "closed" }
                        if bytes.isEmpty { usleep(2_000) }
                    }
                    if let state = try? Self.tcpState(localPort: port, remotePort: reader.localPort), state != Self.established { closing = state }
                }
                continuation.resume(returning: (true, received, closing, Date().timeIntervalSince(start)))
            }.start()
        }
        #expect(started, "the stream's first 100 KB came within a minute (\(received) bytes)")
        #expect(closing == nil, "the server kept the connection of a client that reads (\(received) bytes read in \(seconds) s; its end: \(closing ?? ""))")
        #expect(!started || received >= 2_000_000 && Double(received) < seconds * 1_000_000 + 500_000, "\(received) bytes read in \(seconds) s, at the reader's pace")
        #else
        print("watching the server's end of a connection reads /proc/net/tcp, which only Linux has: skipped")
        #endif
    }

    @Test("a client that reads a large page slowly gets all of it: the page's end, handed over long before it has left, is not the start of an idle connection to cut")
    func slowReaderGetsThePage() async throws {
        // 12 MB of events: a page of 8 MB, more than the socket buffers hold; read at 1 MB a
        // second, for longer than twice the idle timeout.
        let (folder, server) = try await Self.serverOfLargeEvents(megabytes: 12, idleTimeout: 3)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        defer { server.stop() }
        let port = server.port
        // Timed from the page's first byte (building it takes seconds on a busy machine) to its
        // last, read at 1 MB a second from the first: a page the server cut short never completes.
        let (text, seconds, closedEarly) = await withCheckedContinuation { (continuation: CheckedContinuation<(String, Double, Bool), Never>) in
            Thread {
                guard let reader = try? RawConnection(port: port, receiveBuffer: 4096), reader.send(Self.auditorsPageRequest) else {
                    return continuation.resume(returning: ("", 0, false))
                }
                var received: [UInt8] = []
                var whole: Int?
                var start: Date?
                let asked = Date()
                while Date().timeIntervalSince(asked) < 120, received.count < whole ?? .max {
                    if let start, Double(received.count) > Date().timeIntervalSince(start) * 1_000_000 {
                        usleep(20_000)
                        continue
                    }
                    let (bytes, closed) = reader.arrived(atMost: 16_384)
                    if start == nil, !bytes.isEmpty { start = Date() }
                    received += bytes
                    if whole == nil { whole = Self.messageLength(received) }
                    if closed, received.count < whole ?? .max {
                        return continuation.resume(returning: (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start ?? asked), true))
                    }
                    if bytes.isEmpty { usleep(2_000) }
                }
                continuation.resume(returning: (String(decoding: received, as: UTF8.self), Date().timeIntervalSince(start ?? asked), false))
            }.start()
        }
        let lines = text.components(separatedBy: "\r\n")
        let head = lines.first ?? ""
        let length = lines.first { $0.lowercased().hasPrefix("content-length: ") }.flatMap { Int($0.dropFirst(16)) }
        let body = text.range(of: "\r\n\r\n").map { text[$0.upperBound...] } ?? ""
        #expect(head == "HTTP/1.1 200 OK", "\(text.prefix(200))")
        #expect(!closedEarly, "the server closed the connection before the page's end")
        #expect(length != nil && body.utf8.count == length, "the whole page, \(length ?? 0) bytes, came: \(body.utf8.count) in \(seconds) s")
        #expect(body.hasSuffix("]"), "its JSON ends")
        #expect(seconds > 6, "read at the reader's pace from its first byte to its last, over twice the idle timeout: \(seconds) s")
    }

    /// The length of the HTTP answer that `bytes` begin: its head and its `Content-Length`; nil
    /// until the head has come whole.
    static func messageLength(_ bytes: [UInt8]) -> Int? {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let field = head.components(separatedBy: "\r\n").first(where: { $0.hasPrefix("content-length: ") }), let length = Int(field.dropFirst(16)) else { return nil }
        return end.upperBound + length
    }

    static let streamRequest = "GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n"
    static let auditorsStreamRequest = "GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer audrey-secret\r\n\r\n"
    /// A page of the feed of the same events: 8 MB, its end handed to SwiftNIO at once.
    static let auditorsPageRequest = "GET /events?limit=1000 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer audrey-secret\r\n\r\n"

    /// Asks for the event stream on `connection`: what came until the stream's opening comment
    /// (waiting a minute at most: a machine running every suite at once can take seconds).
    static func openStream(on connection: RawConnection) async -> String {
        #expect(connection.send(streamRequest))
        var text = ""
        let opened = Date().addingTimeInterval(60)
        while !text.contains("following the log"), Date() < opened { text += String(decoding: await connection.read() ?? [], as: UTF8.self) }
        return text
    }

    /// A server with `idleTimeout`, on a log of `megabytes` of announcements of 100 KB, and the
    /// folder it runs in. An auditor's stream (`audrey-secret`) carries their whole lines (anyone
    /// else's, their public form: a few bytes).
    static func serverOfLargeEvents(megabytes: Int, idleTimeout: Int) async throws -> (folder: String, server: ServerProcess) {
        let folder = try Self.folder(http: "  idle_timeout_seconds: \(idleTimeout)\n", extra: "tokens:\n  audrey: {token: audrey-secret, role: auditor}\n")
        let store = try await EventStore.open(path: folder + "/events/announcements.jsonl", logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let body = String(repeating: "<p>x</p>", count: 12_500)
        for index in 0..<(megabytes * 10) { _ = try await store.create(AnnouncementDraft(title: "Big \(index)", body: body), by: "alice") }
        await store.close()
        return (folder, try await ServerProcess(in: folder))
    }

    /// The TCP state of the socket from `localPort` to `remotePort` on 127.0.0.1, as /proc/net/tcp
    /// gives it (`01` established); nil once there is none.
    static func tcpState(localPort: Int, remotePort: Int) throws -> String? {
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let local = String(format: "0100007F:%04X", localPort), remote = String(format: "0100007F:%04X", remotePort)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            if fields.count > 3, fields[1] == local, fields[2] == remote { return String(fields[3]) }
        }
        return nil
    }

    static let established = "01"

    @Test("a max_connections the descriptor limit cannot hold stops serve at once, saying what to change")
    func maxConnectionsOverLimit() async throws {
        let folder = try Self.folder(http: "  max_connections: 5000\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["-c", "ulimit -n 256 && exec \"$0\" serve --port 0", CLI.binary.path], in: folder, timeout: 30, executable: "/bin/sh")
        #expect(result.status == 78)
        #expect(result.stderr.contains("config.yaml:6:20: http.max_connections: 5000 connections, but this process may open only 256 descriptors, which leaves room for 128 connections"), "\(result.stderr)")
    }

    @Test("a descriptor limit that leaves room for few connections, with max_connections unset, is a warning at start-up, not an info line")
    func fewConnectionsWarned() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, descriptorLimit: 200, errorLog: errorLog)
        #expect(await server.stopped() == 0)
        let text = try String(contentsOfFile: errorLog, encoding: .utf8)
        #expect(text.contains(" warning announcements: the descriptor limit leaves room for only 72 connections: raise it"), "\(text)")
    }

    @Test("past max_connections a new connection is answered 503 at once; those connected are still served")
    func connectionLimit() async throws {
        // 256 descriptors leave room for 128 connections (128 are kept for the rest).
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, descriptorLimit: 256, errorLog: errorLog)
        defer { server.stop() }
        let served = try RawConnection(port: server.port)
        #expect(served.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(await served.readResponse(seconds: 10).hasPrefix("HTTP/1.1 200"))
        // `/metrics` counts the connections open: this one and two more (once the server has
        // accepted them: a client's connect does not wait for that).
        let two = try (0..<2).map { _ in try RawConnection(port: server.port) }
        var open: Int?
        for _ in 0..<100 where open != 3 {
            open = await Self.openConnections(over: served)
            if open != 3 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(open == 3, "\(String(describing: open))")
        #expect(two.count == 2)
        // More idle connections than descriptors: before the limit, the server ran out of them.
        let idle = try (0..<300).map { _ in try RawConnection(port: server.port) }
        // A new connection is answered at once. (While a flood of them is being refused, some are
        // closed without an answer, so that refusing cannot take every descriptor: try a few.)
        var refused = (text: "", closed: false)
        for _ in 0..<10 where !refused.text.hasPrefix("HTTP/1.1 503") {
            let late = try RawConnection(port: server.port)
            #expect(late.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
            // Behind it in the accept queue stand the ~170 connections past the limit, each refused
            // first: on a debug build with both cores taken by other work that has taken over 5 s.
            refused = await late.readUntilClosed(seconds: 30)
            #expect(refused.closed, "never left waiting")
            if !refused.text.hasPrefix("HTTP/1.1 503") { try await Task.sleep(for: .milliseconds(500)) }
        }
        #expect(refused.text.hasPrefix("HTTP/1.1 503"), "\(refused.text.prefix(300))")
        #expect(refused.text.contains(#"{"error":503,"message":"the server has as many connections open as it allows (http.max_connections: 128)"#))
        #expect(refused.text.contains("X-Content-Type-Options: nosniff\r\n"), "\(refused.text.prefix(300))")
        #expect(refused.closed)
        #expect(served.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(await served.readResponse(seconds: 10).hasPrefix("HTTP/1.1 200"), "a connection made before the limit is still served")
        #expect(try await Self.cuts("over_limit", server: server, over: served) ?? 0 >= 1, "counted in the metrics")
        // The connections open: at most the limit (the refused ones are not among them).
        let atLimit = try #require(await Self.openConnections(over: served))
        #expect((1...128).contains(atLimit), "\(atLimit)")
        // And said in the server's log: a warning, not one line for each of the ~170 refused.
        let warnings = try String(contentsOfFile: errorLog, encoding: .utf8).split(separator: "\n").filter { $0.contains("past http.max_connections (128)") }
        #expect(!warnings.isEmpty && warnings.count < 10 && warnings.allSatisfy { $0.contains(" warning ") }, "\(warnings)")
        #if os(Linux)
        // The event loop does not spin on connections it cannot take.
        let before = try Self.cpuSeconds(of: server.process.processIdentifier)
        try await Task.sleep(for: .seconds(2))
        let spent = try Self.cpuSeconds(of: server.process.processIdentifier) - before
        #expect(spent < 0.5, "the server used \(spent) s of CPU in 2 s with \(idle.count) connections waiting")
        #else
        print("the CPU check reads /proc, which only Linux has: skipped")
        #endif
    }

    /// User and system CPU time of `pid` so far, from /proc.
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which ends with ')'): utime and stime are the 12th and 13th.
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = try #require(Double(fields[11])) + #require(Double(fields[12]))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test("SIGTERM with an upload stalled mid-body stops within the grace period, exit 0, lock released")
    func boundedStop() async throws {
        let folder = try Self.folder(
            http: "  read_timeout_seconds: 60\n  shutdown_grace_seconds: 1\n",
            extra: "tokens:\n  editor: env:TEST_TOKEN\n"
        )
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder, environment: ["TEST_TOKEN": "s3cret"])
        let write = try RawConnection(port: server.port)
        let post = #"{"title":"Kept"}"#
        #expect(write.send("POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: \(post.utf8.count)\r\n\r\n\(post)"))
        #expect(await write.readResponse(seconds: 10).hasPrefix("HTTP/1.1 201"))
        let stalled = try RawConnection(port: server.port)
        #expect(stalled.send("POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ti"))
        // The stalled request is being read once a later request on the same server is answered.
        #expect(write.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(await write.readResponse(seconds: 10).hasPrefix("HTTP/1.1 200"))
        try await Task.sleep(for: .milliseconds(300))
        let started = Date()
        server.process.terminate()
        let killer = DispatchWorkItem { kill(server.process.processIdentifier, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: killer)
        let process = server.process
        // The exit's time taken on the thread that waits for it, not once this test's task runs
        // again (a busy machine's cooperative pool may run it seconds later).
        let exited = try await offPool { () -> Date in
            process.waitUntilExit()
            return Date()
        }
        killer.cancel()
        #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0)
        #expect(exited.timeIntervalSince(started) < 15, "a 1 s grace period, not the stalled client (60 s), decides when it stops")
        let reopened = try await CLI.run(["init"], in: folder)
        #expect(reopened.status == 0, "the lock was released: \(reopened.stderr)")
        #expect(reopened.stdout.contains("2 events"), "the acknowledged write is kept: \(reopened.stdout)")
    }

    /// Requests the HTTP parser refuses, built when a test runs (their text is too long to name one).
    enum Malformed: String, CaseIterable, Sendable {
        case longURI, longHeaderField, manyLongHeaderFields, notHTTP
        case chunkSizeNotHex, chunkSizeTooLong, chunkSizeNegative, unknownTransferCoding, http10PostWithoutLength

        /// A chunked POST whose first chunk is a whole announcement, then `size` as the next chunk's size.
        static func chunked(nextSize size: String) -> String {
            let json = #"{"title":"Sneaked in"}"#
            return "POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer w-secret\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(json.utf8.count, radix: 16) + "\r\n\(json)\r\n\(size)\r\nxx\r\n0\r\n\r\n"
        }

        var request: String {
            switch self {
            case .longURI: "GET /\(String(repeating: "a", count: 20_000)) HTTP/1.1\r\nHost: x\r\n\r\n"
            case .longHeaderField: "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n"
            case .manyLongHeaderFields: "GET /health HTTP/1.1\r\nHost: x\r\n" + String(repeating: "X-Many: \(String(repeating: "c", count: 1000))\r\n", count: 80) + "\r\n"
            case .notHTTP: "HELLO THERE\r\n\r\n"
            case .chunkSizeNotHex: Self.chunked(nextSize: "zz")
            case .chunkSizeTooLong: Self.chunked(nextSize: String(repeating: "f", count: 24))
            case .chunkSizeNegative: Self.chunked(nextSize: "-1")
            case .unknownTransferCoding:
                "POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer w-secret\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n" + #"{"title":"Sneaked in"}"#
            case .http10PostWithoutLength:
                "POST /announcements HTTP/1.0\r\nAuthorization: Bearer w-secret\r\nContent-Type: application/json\r\n\r\n" + #"{"title":"Sneaked in"}"#
            }
        }

        var status: Int {
            switch self {
            case .longURI: 414
            case .longHeaderField, .manyLongHeaderFields: 431
            case .notHTTP, .chunkSizeNotHex, .chunkSizeTooLong, .chunkSizeNegative, .unknownTransferCoding: 400
            case .http10PostWithoutLength: 411
            }
        }

        /// The version the answer is in: the request's, when it was read.
        var version: String { self == .http10PostWithoutLength ? "HTTP/1.0" : "HTTP/1.1" }
    }

    @Test("requests the HTTP parser refuses, in their head or their body, get a JSON error with the right status, then the connection closes; nothing is written", arguments: Malformed.allCases)
    func parserRejections(malformed: Malformed) async throws {
        let status = malformed.status
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n", extra: "tokens:\n  w: { token: w-secret, role: editor }\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, errorLog: errorLog)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        connection.send(malformed.request)
        let (text, closed) = await connection.readUntilClosed(seconds: 10)
        #expect(text.hasPrefix("\(malformed.version) \(status) "), "\(text.prefix(300))")
        #expect(text.lowercased().contains("content-type: application/json;charset=utf-8"), "\(text.prefix(300))")
        #expect(text.lowercased().contains("x-content-type-options: nosniff"))
        #expect(text.contains(#"{"error":\#(status),"message":""#))
        #expect(closed)
        if malformed != .http10PostWithoutLength {
            #expect(try await Self.cuts("bad_request", server: server) == 1, "counted in the metrics")
        }
        let log = try String(contentsOfFile: folder + "/events/announcements.jsonl", encoding: .utf8)
        #expect(!log.contains("Sneaked in"), "nothing of a malformed request is written")
        // Every refused request has its line in the server's log, with its status: the access
        // log's, or (one the parser refused before it could be read) one that says so.
        var logged: [Substring] = []
        for _ in 0..<100 {
            logged = try String(contentsOfFile: errorLog, encoding: .utf8).split(separator: "\n").filter { $0.contains(" \(status) ") }
            if !logged.isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(logged.count == 1 && logged.allSatisfy { $0.contains(" info ") && $0.contains("client.address=127.0.0.1:") }, "\(logged)")
    }

    /// A whole announcement as the first chunk of a chunked POST, or before the end its
    /// Content-Length says: a body that stops there is cut short, never whole.
    static let unfinishedBodies = [
        String(Malformed.chunked(nextSize: "40").dropLast("40\r\nxx\r\n0\r\n\r\n".count)),
        "POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer w-secret\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + #"{"title":"Sneaked in"}"#,
    ]

    @Test("a body cut off, by the client's leaving or by the read timeout, is not taken for a whole one: a 400, and nothing is written (the read timeout's cut was written, 201)", arguments: [
        (unfinishedBodies[0], true), (unfinishedBodies[1], true), (unfinishedBodies[0], false), (unfinishedBodies[1], false),
    ])
    func bodyCutShort(request: String, clientLeaves: Bool) async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n  read_timeout_seconds: 2\n", extra: "tokens:\n  w: { token: w-secret, role: editor }\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errors = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, errorLog: errors)
        defer { server.stop() }
        var connection: RawConnection? = try RawConnection(port: server.port)
        #expect(connection?.send(request) == true)
        if clientLeaves {
            try await Task.sleep(for: .milliseconds(200))
            connection = nil  // closed, the body unfinished
        }
        // Else the read timeout (2 s) cuts it off. The request's answer is decided either way, and
        // logged: wait for it (at most 60 s).
        var answered: String?
        for _ in 0..<600 where answered == nil {
            answered = try String(contentsOfFile: errors, encoding: .utf8).split(separator: "\n").first { $0.contains(#"POST "/announcements""#) }.map(String.init)
            if answered == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        withExtendedLifetime(connection) {}
        #expect(answered?.contains(#"POST "/announcements" 400 "#) == true, "\(answered ?? "no answer logged")")
        let log = try String(contentsOfFile: folder + "/events/announcements.jsonl", encoding: .utf8)
        #expect(!log.contains("Sneaked in"), "a body cut short is never written")
    }

    @Test("a request that says Expect: 100-continue hears 100 Continue at once, and its body, sent then, is written; the connection goes on")
    func expectContinue() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n", extra: "tokens:\n  editor: s3cret\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let post = #"{"title":"Sent after 100 Continue"}"#
        #expect(connection.send("POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: \(post.utf8.count)\r\nExpect: 100-continue\r\n\r\n"))
        let interim = await connection.readResponse(seconds: 10)
        #expect(interim.hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(interim)")
        #expect(connection.send(post))
        let created = await connection.readResponse(seconds: 10)
        #expect(created.hasPrefix("HTTP/1.1 201"), "\(created)")
        #expect(connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
        #expect(await connection.readResponse(seconds: 10).hasPrefix("HTTP/1.1 200"))
        // Refused before its body: the 401 at once after the 100; the body sent anyway is dropped.
        #expect(connection.send("POST /announcements HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(post.utf8.count)\r\nExpect: 100-continue\r\n\r\n"))
        var refused = await connection.readResponse(seconds: 10)
        // (The 100 and the 401 may come in one read or two.)
        if refused.hasPrefix("HTTP/1.1 100"), !refused.contains("HTTP/1.1 401") { refused += await connection.readResponse(seconds: 10) }
        #expect(refused.hasPrefix("HTTP/1.1 100 Continue\r\n") && refused.contains("HTTP/1.1 401"), "\(refused)")
    }

    @Test("a request pipelined behind another that says Expect: 100-continue hears 100 Continue right after the answer before it, and its body is written")
    func expectContinuePipelined() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n", extra: "tokens:\n  editor: s3cret\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let post = #"{"title":"Pipelined"}"#
        #expect(connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: \(post.utf8.count)\r\nExpect: 100-continue\r\n\r\n"))
        var text = ""
        let deadline = Date().addingTimeInterval(60)
        while !text.contains("100 Continue"), Date() < deadline { text += String(decoding: await connection.read() ?? [], as: UTF8.self) }
        let health = text.range(of: "HTTP/1.1 200"), interim = text.range(of: "HTTP/1.1 100 Continue\r\n")
        #expect(health != nil && interim != nil && health!.lowerBound < interim!.lowerBound, "\(text)")
        #expect(connection.send(post))
        let created = await connection.readResponse(seconds: 60)
        #expect(created.hasPrefix("HTTP/1.1 201"), "\(created)")
    }

    @Test("a request pipelined behind an event stream that says Expect: 100-continue hears no 100 Continue inside the stream: the stream's chunks stay framed")
    func expectContinueBehindStream() async throws {
        // The base config's heartbeat: every second.
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n", extra: "tokens:\n  editor: s3cret\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        let text = await Self.openStream(on: connection)
        #expect(text.hasPrefix("HTTP/1.1 200") && text.contains("transfer-encoding: chunked"), "\(text)")
        #expect(connection.send("POST /announcements HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"))
        // Heartbeats (one a second) must come as chunks (a size line, then the comment): read until
        // one has (a minute at most).
        var rest = ""
        let heartbeat = Date().addingTimeInterval(60)
        while !rest.contains("\r\n: heartbeat\n\n\r\n"), Date() < heartbeat { rest += String(decoding: await connection.read() ?? [], as: UTF8.self) }
        #expect(!rest.contains("100 Continue"), "\(rest)")
        #expect(rest.contains("\r\n: heartbeat\n\n\r\n"), "the heartbeats are chunks: \(rest)")
    }

    @Test("a client that leaves an event stream (closing its socket, or only its sending side) gives its place back at once, not at the next heartbeat: a stream past the limit is taken right after", arguments: [false, true])
    func leftStreamGivesBackItsPlace(halfClose: Bool) async throws {
        // One stream allowed (half of two connections), heartbeats an hour apart.
        let folder = try makeFolder(config: "log: events/announcements.jsonl\nseed:\n  - title: One\nfeed_heartbeat_seconds: 3600\nhttp:\n  max_connections: 2\n  idle_timeout_seconds: 3600\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let request = Self.streamRequest
        var first: RawConnection? = try RawConnection(port: server.port)
        let text = try await Self.openStream(on: #require(first))
        #expect(text.hasPrefix("HTTP/1.1 200"), "\(text)")
        // While it is open, a second stream is refused.
        do {
            let refused = try RawConnection(port: server.port)
            #expect(refused.send(request))
            let answer = await refused.readResponse(seconds: 60)
            #expect(answer.hasPrefix("HTTP/1.1 503") && answer.contains("as many event streams open as it allows"), "\(answer)")
        }
        // The client leaves: it closes the socket, or only its sending side (and reads no more).
        if halfClose { first?.closeSending() } else { first = nil }
        // Its place comes back within seconds (a minute at most, on a machine running every suite
        // at once), where the heartbeat, which used to find it gone, is an hour away.
        let deadline = Date().addingTimeInterval(60)
        var taken = ""
        while Date() < deadline {
            let next = try RawConnection(port: server.port)
            #expect(next.send(request))
            taken = await next.readUntilClosed(seconds: 3).text
            if taken.hasPrefix("HTTP/1.1 200") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(taken.hasPrefix("HTTP/1.1 200"), "\(taken)")
        withExtendedLifetime(first) {}
    }

    @Test("an HTTP/1.1 request without a Host field, or with two, is a 400 that closes the connection, after the answer owed before it; HTTP/1.0 needs none", arguments: ["", "Host: a\r\nHost: b\r\n"])
    func hostRequired(host: String) async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n", extra: "tokens:\n  editor: s3cret\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let post = #"{"title":"Without a host"}"#
        let connection = try RawConnection(port: server.port)
        // A good request, then the one without a host (pipelined): the first is answered, then the 400.
        #expect(connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /announcements HTTP/1.1\r\n\(host)Authorization: Bearer s3cret\r\nContent-Type: application/json\r\nContent-Length: \(post.utf8.count)\r\n\r\n\(post)"))
        // (A minute at most, on a machine running every suite at once: it ends at the close.)
        let (text, closed) = await connection.readUntilClosed(seconds: 60)
        #expect(closed, "\(text)")
        let health = text.range(of: "HTTP/1.1 200"), refused = text.range(of: "HTTP/1.1 400")
        #expect(health != nil && refused != nil && health!.lowerBound < refused!.lowerBound, "\(text)")
        #expect(text.contains("must have exactly one Host field"), "\(text)")
        let log = try String(contentsOfFile: folder + "/events/announcements.jsonl", encoding: .utf8)
        #expect(!log.contains("Without a host"), "nothing of the refused request is written")
        // HTTP/1.0 has no Host requirement.
        let old = try RawConnection(port: server.port)
        #expect(old.send("GET /health HTTP/1.0\r\n\r\n"))
        #expect(await old.readUntilClosed(seconds: 60).text.hasPrefix("HTTP/1.0 200"))
    }

    @Test("CONNECT (this server is no proxy) is a 501 that closes the connection after the answer owed before it, not an answer the connection then waits on; a Host that is not one host[:port] is a 400; what the parser refuses is named in words (a method it does not know too)", arguments: [
        ("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 501", ""),
        ("CONNECT /announcements HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 501", ""),
        ("GET /health HTTP/1.1\r\nHost: a, b\r\n\r\n", "HTTP/1.1 400", #"not \"a, b\""#),
        ("GET /health HTTP/1.1\r\nHost: x/y\r\n\r\n", "HTTP/1.1 400", "must be one host"),
        // Refused by SwiftNIO's parser, named in words.
        ("POST /announcements HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 400", "with Transfer-Encoding (RFC 9112 6.3"),
        ("POST /announcements HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n", "HTTP/1.1 400", "with Transfer-Encoding (RFC 9112 6.3"),
        ("GET /health HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n", "HTTP/1.1 400", "a header field's name or value"),
        // A method it does not know: named, with those it takes (a known one no route takes is a 405).
        ("FOO /announcements HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400", "its method: this server takes GET, HEAD, POST"),
    ])
    func refusedHeads(request: String, status: String, message: String) async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + request))
        // Closed at once (SwiftNIO read a CONNECT's answer as the start of a tunnel: no length, no
        // body, and the connection open until its 60 s idle timeout); a minute at most, on a busy machine.
        let started = ContinuousClock.now
        let (text, closed) = await connection.readUntilClosed(seconds: 60)
        #expect(closed && ContinuousClock.now - started < .seconds(30), "\(text)")
        let health = text.range(of: "HTTP/1.1 200"), refused = text.range(of: status)
        #expect(health != nil && refused != nil && health!.lowerBound < refused!.lowerBound, "\(text)")
        // (SwiftNIO frames any answer to CONNECT without a body: the 501 says it by its status.)
        #expect(message.isEmpty || text.contains(message), "\(text)")
        #expect(text.contains("Connection: close"), "\(text)")
        if let refused { #expect(text[refused.lowerBound...].contains("Cache-Control: no-store"), "no cache keeps it: \(text)") }
        // The server goes on serving.
        let next = try RawConnection(port: server.port)
        #expect(next.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
        #expect(await next.readUntilClosed(seconds: 60).text.hasPrefix("HTTP/1.1 200"))
    }

    @Test("an HTTP/1.0 request with Connection: keep-alive is told so, and its connection serves the next request")
    func http10KeepAlive() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        for _ in 0..<2 {
            #expect(connection.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"))
            let text = await connection.readResponse(seconds: 10)
            #expect(text.hasPrefix("HTTP/1.0 200"), "\(text)")
            #expect(text.lowercased().contains("\r\nconnection: keep-alive\r\n"), "\(text)")
        }
    }

    @Test("an HTTP/1.0 request without keep-alive is answered in HTTP/1.0 and its connection closed")
    func http10() async throws {
        let folder = try Self.folder(http: "  idle_timeout_seconds: 60\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.send("GET /health HTTP/1.0\r\n\r\n"))
        let (text, closed) = await connection.readUntilClosed(seconds: 10)
        #expect(text.hasPrefix("HTTP/1.0 200"), "\(text)")
        #expect(text.contains(#""status":"ok""#))
        #expect(closed, "the connection closes after the answer")
    }
}
