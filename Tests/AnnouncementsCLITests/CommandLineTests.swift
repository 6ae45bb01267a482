import AnnouncementsDomain
import AnnouncementsStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `announcements` binary, run as a user runs it.
struct CLI {
    static let binary: URL = {
        // The test bundle sits next to the products it was built with.
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = products.appendingPathComponent("announcements")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../.build/debug/announcements").standardized
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the CLI to its end; a run still going after `timeout` seconds is terminated (its
    /// status then tells the test it hung, and its stderr ends with a line that says so): no test
    /// waits for ever on a command that hangs.
    /// `executable` runs another program instead (a shell that sets limits, then runs the CLI).
    /// It waits on a thread of its own, never one of the cooperative pool's (two on a 2-core
    /// machine, shared by every test running at once).
    static func run(_ arguments: [String], in folder: String? = nil, environment: [String: String] = [:], input: String? = nil, timeout: Double = 300, executable: String? = nil) async throws -> Result {
        try await offPool { try runWaiting(arguments, in: folder, environment: environment, input: input, timeout: timeout, executable: executable) }
    }

    private static func runWaiting(_ arguments: [String], in folder: String?, environment: [String: String], input: String?, timeout: Double, executable: String?) throws -> Result {
        var inherited = ProcessInfo.processInfo.environment
        inherited["ANNOUNCEMENTS_SERVER"] = nil
        inherited["ANNOUNCEMENTS_TOKEN"] = nil
        // Remote commands wait for a debug server on a busy machine (5 s by default).
        inherited["ANNOUNCEMENTS_TIMEOUT"] = "60"
        let process = try ChildProcess(
            executable ?? binary.path, arguments, environment: inherited.merging(environment) { $1 }, directory: folder,
            input: input == nil ? .null : .pipe
        )
        if let input { process.send(Array(input.utf8)) }
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak process] in process?.terminate() }
        // Both pipes read at once: a process that fills one while the test waits on the other
        // would wait for ever. Stderr on a thread of its own, not Dispatch's: on Linux, Swift's
        // tasks run on Dispatch's global threads (at most twice the cores), and four commands
        // blocked reading there once held every one of them, so that no test's task ran for
        // seconds (a raw socket's reader missed its server's answer).
        let errors = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var stderr = Data()
        Thread {
            stderr = process.error.map(readToEnd) ?? Data()
            errors.signal()
        }.start()
        let stdout = process.output.map(readToEnd) ?? Data()
        errors.wait()
        process.waitUntilExit()
        var errorText = String(decoding: stderr, as: UTF8.self)
        if process.terminationReason == .uncaughtSignal, Date().timeIntervalSince(started) >= timeout { errorText += "\n[test] `announcements \(arguments.joined(separator: " "))` was still running after \(timeout) s: terminated\n" }
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: errorText)
    }
}

/// `announcements serve --port 0` running in `folder`, on the port it printed.
struct ServerProcess {
    let process: ChildProcess
    let port: Int
    /// The address its first line says it listens on (`http://127.0.0.1:PORT`).
    let listening: String

    /// With `descriptorLimit`, the server runs under that limit on open descriptors (soft and hard).
    /// `binary` runs another copy of the CLI. With `errorLog`, stderr goes to that file.
    /// `arguments` replace `serve --port 0`.
    /// Waits for the server's first line on a thread of its own, at most two minutes (a server that
    /// says nothing by then is stopped, and the test fails).
    init(in folder: String, environment: [String: String] = [:], descriptorLimit: Int? = nil, binary: URL = CLI.binary, errorLog: String? = nil, errorStream: ChildProcess.Stream? = nil, arguments: [String] = ["serve", "--port", "0"]) async throws {
        let environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let error: ChildProcess.Stream = errorStream ?? errorLog.map { .file($0) } ?? .null
        if let descriptorLimit {
            process = try ChildProcess(
                "/bin/sh", ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", binary.path] + arguments,
                environment: environment, directory: folder, error: error
            )
        } else {
            process = try ChildProcess(binary.path, arguments, environment: environment, directory: folder, error: error)
        }
        let process = self.process
        // SIGKILL: a server stuck in its start-up may not get to its SIGTERM handler.
        let silent = DispatchWorkItem { if process.isRunning { process.signal(SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: silent)
        let firstLine = try await offPool {
            var line: [UInt8] = []
            while line.last != UInt8(ascii: "\n"), let byte = process.output.flatMap(readByte) { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        silent.cancel()
        guard firstLine.hasPrefix("listening on http://") else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            Issue.record("the server's first line is not `listening on`: \(firstLine)")
            throw CancellationError()
        }
        port = try #require(Int(firstLine.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        #expect(port > 0)
        listening = firstLine.dropFirst("listening on ".count).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Sends SIGTERM (or SIGINT with `interrupt`) and returns the exit status, waiting on a
    /// thread of its own (`offPool`).
    func stopped(interrupt: Bool = false) async -> Int32 {
        let process = self.process
        return (try? await offPool { Self.stop(process, interrupt: interrupt) }) ?? -1
    }

    /// For a `defer`, which cannot wait asynchronously: sends SIGTERM and leaves the wait for the
    /// exit to a thread of its own. Waiting here would hold one of the cooperative pool's threads
    /// (two on a 2-core machine, which every other test's in-process server needs) for as long
    /// as the server takes to stop; with a dozen such tests at once under load, an in-process
    /// server went unanswered for a minute.
    func stop() {
        let process = self.process
        process.terminate()
        Thread { process.waitUntilExit() }.start()
    }

    private static func stop(_ process: ChildProcess, interrupt: Bool) -> Int32 {
        if interrupt { process.interrupt() } else { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Runs `body`, which blocks (on a process, a pipe, a socket), on a thread of its own: the
/// cooperative pool's few threads stay free for every other test and in-process server. (Not
/// on `DispatchQueue.global()`: on Linux that is the pool.)
func offPool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
    }
}

/// A fresh folder holding a `config.yaml` with `config`.
func makeFolder(config: String) throws -> String {
    let folder = NSTemporaryDirectory() + "cli-test-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try config.write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
    return folder
}

/// A folder with a log written by the store: seeded, then edited and deleted.
func makeLog() async throws -> (folder: String, log: String) {
    let folder = try makeFolder(config: "log: events/announcements.jsonl\n")
    let log = folder + "/events/announcements.jsonl"
    let seed = [AnnouncementDraft(title: "Welcome", body: "<p>Hello</p>"), AnnouncementDraft(title: "Lunch")]
    let store = try await EventStore.open(path: log, seed: seed, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    _ = try await store.update(id: 1, AnnouncementPatch(title: "Welcome aboard", body: .set("<p>Hello, world</p>")), by: "alice")
    try await store.delete(id: 2, by: "bob")
    _ = try await store.create(AnnouncementDraft(title: "Parking", body: "<p>Level 2</p>"), by: "alice")
    await store.close()
    return (folder, log)
}

@Suite struct CommandLineTests {
    @Test("a program the tests run holds no descriptor of the test process but its three streams (a copy of a socket kept it in this process's epoll sets after its close, and a test hung)",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "lists a process's descriptors in /proc (Linux)"))
    func childInheritsNoDescriptor() async throws {
        let fd = open("/dev/null", O_RDONLY)  // not close-on-exec
        #expect(fd > 2)
        defer { close(fd) }
        let listed = try await CLI.run(["-c", "ls /proc/$$/fd"], executable: "/bin/sh")
        let fds = listed.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
        #expect(fds.contains(0) && fds.contains(1) && fds.contains(2), "\(listed.stdout)")
        #expect(!fds.contains(fd), "the shell holds the test's descriptor \(fd): \(listed.stdout)")
    }

    @Test("replay --format json prints the state, sorted by id")
    func replayJSON() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["replay", "--format", "json"], in: folder)
        #expect(result.status == 0)
        #expect(result.stdout == #"{"seq":5,"announcements":[{"id":1,"title":"Welcome aboard","body":"<p>Hello, world</p>"},{"id":3,"title":"Parking","body":"<p>Level 2</p>"}]}"# + "\n")
        let untilTwo = try await CLI.run(["replay", "--format", "json", "--until", "2"], in: folder)
        #expect(untilTwo.stdout.contains(#"{"seq":2,"announcements":[{"id":1,"title":"Welcome","body":"<p>Hello</p>"},{"id":2,"title":"Lunch","body":null}]}"#))
        // Erased since: a past state leaves it out (its texts are gone), as the HTTP API does.
        let erase = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erase.status == 0, "\(erase.stderr)")
        #expect(erase.stdout == "erased announcement 1: event 6 by root; sealed lines 1, 3\n", "the lines by number: \(erase.stdout)")
        let past = try await CLI.run(["replay", "--format", "json", "--until", "2"], in: folder)
        #expect(past.stdout == #"{"seq":2,"announcements":[{"id":2,"title":"Lunch","body":null}]}"# + "\n", "\(past.stdout)")
    }

    @Test("replay prints a table, and --log wins over the config")
    func replayTable() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The config names another log (and must load, as it does); --log wins.
        try "log: elsewhere/announcements.jsonl\n".write(toFile: folder + "/other.yaml", atomically: true, encoding: .utf8)
        let result = try await CLI.run(["replay", "--config", folder + "/other.yaml", "--log", log])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ID  REV  TITLE           BODY"))
        #expect(result.stdout.contains("1   3    Welcome aboard  19 bytes"))
        #expect(result.stdout.contains("2 announcements at seq 5"))
    }

    @Test("history shows who changed what, including deleted announcements")
    func history() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let all = try await CLI.run(["history"], in: folder)
        #expect(all.status == 0)
        let rows = all.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 6)
        #expect(rows[0].hasPrefix("SEQ  TIME"))
        #expect(rows[3].contains("edited   alice  1   title \"Welcome\" → \"Welcome aboard\"; body 12 → 19 bytes (+7)"))
        #expect(rows[4].contains("deleted  bob    2   \"Lunch\" (no body)"))

        let deletedOne = try await CLI.run(["history", "2", "--format", "json"], in: folder)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(deletedOne.stdout.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["type"] as? String } == ["created", "deleted"])
        #expect((entries[1]["title"] as? [String: Any])?["from"] as? String == "Lunch")

        let jsonl = try await CLI.run(["history", "--by", "alice", "--format", "jsonl"], in: folder)
        let logLines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(jsonl.stdout == [logLines[2], logLines[4]].joined(separator: "\n") + "\n", "jsonl prints the log's lines unchanged")

        let since = try await CLI.run(["history", "--since", "4", "--type", "created"], in: folder)
        #expect(since.stdout.split(separator: "\n").count == 2)

        // What could never match is said, as the API says it, not printed as "no events".
        let never = try await CLI.run(["history", "9"], in: folder)
        #expect(never.status == 1 && never.stderr.hasPrefix("error: announcement 9 was never created: the ids of ") && never.stderr.hasSuffix(" go up to 3\n"), "\(never.stderr)")
        #expect(never.stdout.isEmpty)
        let noId = try await CLI.run(["history", "0"], in: folder)
        #expect(noId.status == 64 && noId.stderr.contains("an announcement's id is 1 or more; got 0."), "\(noId.stderr)")
        for (since, until) in [("5", "3"), ("2026-11-22T00:00:00Z", "2026-11-21T00:00:00Z")] {
            let backwards = try await CLI.run(["history", "--since", since, "--until", until], in: folder)
            #expect(backwards.status == 64 && backwards.stderr.contains("--since \(since) comes after --until \(until): no event could be in between."), "\(backwards.stderr)")
        }
        let bounded = try await CLI.run(["history", "9", "--until", "2"], in: folder)
        #expect(bounded.status == 0 && bounded.stdout == "no events for announcement 9\n", "a bounded read says only what it read: \(bounded.stderr)")
    }

    @Test("history of an erased announcement says its texts are erased (it made up empty titles and dropped the reason), in the table and in json")
    func historyOfErased() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Announcement 2: created (seq 2), deleted (seq 4); then erased (seq 6).
        let erase = try await CLI.run(["erase", "2", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erase.status == 0, "\(erase.stderr)")
        let table = try await CLI.run(["history", "2"], in: folder)
        let rows = table.stdout.split(separator: "\n").map(String.init)
        #expect(rows.count == 4, "\(table.stdout)")
        #expect(rows[1].contains("  created  seed  2   (text erased)"), "\(rows)")
        #expect(rows[2].contains("  deleted  bob   2   (text erased)"), "\(rows)")
        #expect(rows[3].contains("  erased   root  2   erased: \"personal data\""), "\(rows)")

        let json = try await CLI.run(["history", "2", "--format", "json"], in: folder)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(entries.map { $0["type"] as? String } == ["created", "deleted", "erased"])
        for entry in entries {
            #expect(entry["textsErased"] as? Bool == true, "\(entry)")
            #expect(entry["title"] == nil && entry["bodyLength"] == nil, "no made-up texts: \(entry)")
        }
        #expect(entries[2]["reason"] as? String == "personal data")
        // Another announcement's trail is as before.
        let other = try await CLI.run(["history", "1", "--format", "json"], in: folder)
        #expect(!other.stdout.contains("textsErased"))
        #expect(other.stdout.contains(#""title":{"from":"Welcome","to":"Welcome aboard"}"#))
    }

    @Test("history of an announcement whose erasure was interrupted (its erased event written, its lines not sealed yet) shows no text of it either")
    func historyOfInterruptedErasure() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A crash after the erased event, before the overwrite: lines 1 and 3 still hold their texts.
        let before = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let erasure = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(erasure.status == 0, "\(erasure.stderr)")
        var unsealed = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        unsealed[0] = before[0]
        unsealed[2] = before[2]
        try (unsealed.joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        #expect(try String(contentsOfFile: log, encoding: .utf8).contains("Welcome"))
        let table = try await CLI.run(["history", "1"], in: folder)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(!table.stdout.contains("Welcome"), "\(table.stdout)")
        #expect(table.stdout.components(separatedBy: "(text erased)").count == 3, "created and edited: \(table.stdout)")
        let json = try await CLI.run(["history", "1", "--format", "json"], in: folder)
        #expect(!json.stdout.contains("Welcome"), "\(json.stdout)")
        #expect(json.stdout.components(separatedBy: #""textsErased":true"#).count == 4, "\(json.stdout)")
        // The log's lines print sealed, as finishing the erasure writes them.
        let lines = try await CLI.run(["history", "1", "--format", "jsonl"], in: folder)
        #expect(lines.status == 0, "\(lines.stderr)")
        #expect(!lines.stdout.contains("Welcome") && !lines.stdout.contains("Hello"), "\(lines.stdout)")
        #expect(lines.stdout.split(separator: "\n").count == 3, "created, edited, erased: \(lines.stdout)")
        // Nor a trail cut before its erased event.
        for format in ["table", "json", "jsonl"] {
            let cut = try await CLI.run(["history", "1", "--until", "5", "--format", format], in: folder)
            #expect(cut.status == 0 && !cut.stdout.contains("Welcome") && cut.stdout.contains("seed"), "\(format): \(cut.stdout)")
        }
        // Erasing it again finishes it: done as asked, and said so; the lines are as history printed them.
        let again = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "announcement 1 was erased already (event 6), but its erasure had been interrupted: finished it; sealed lines 1, 3\n")
        let sealed = try await CLI.run(["history", "1", "--format", "jsonl"], in: folder)
        #expect(sealed.stdout == lines.stdout)
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains(#""id":1,"#) }.joined(separator: "\n") + "\n" == lines.stdout)
        let done = try await CLI.run(["erase", "1", "--reason", "personal data", "--by", "root"], in: folder)
        #expect(done.status == 1 && done.stderr.contains("announcement 1 was erased (event 6)"), "\(done.stderr)")
        // Nor a past state from before its erased event, read past the bound only for erasures
        // (a damaged line there is not the past state's to refuse).
        let damaged = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try damaged.seekToEnd()
        try damaged.write(contentsOf: Data("not an event\n".utf8))
        try damaged.close()
        for snapshot in [[], ["--no-snapshot"]] {
            let past = try await CLI.run(["replay", "--until", "4"] + snapshot, in: folder)
            #expect(past.status == 0, "\(past.stderr)")
            #expect(!past.stdout.contains("Welcome") && past.stdout.contains("0 announcements at seq 4"), "\(past.stdout)")
        }
    }

    @Test("verify prints a summary and exits 0 on a sound log, 1 with each problem on a damaged one")
    func verify() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sound = try await CLI.run(["verify"], in: folder)
        #expect(sound.status == 0)
        #expect(sound.stdout.contains("sound"))
        #expect(sound.stdout.contains("events:              5"))
        #expect(sound.stdout.contains("live announcements:  2"))
        #expect(sound.stdout.contains("sealed lines:        5 of 5"))
        let lastLine = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").last!
        #expect(sound.stdout.contains("head:                5:\(LineHash(link: Array(lastLine.utf8)))"))

        var text = try String(contentsOfFile: log, encoding: .utf8)
        text = text.replacingOccurrences(of: "Lunch", with: "Brunch")
        try text.write(toFile: log, atomically: false, encoding: .utf8)
        let damaged = try await CLI.run(["verify"], in: folder)
        #expect(damaged.status == 1)
        #expect(damaged.stdout.contains("events/announcements.jsonl:3: `prev` does not match the SHA-256 of line 2"))
        #expect(damaged.stderr.contains("1 problem found"))

        // Both to one file, as `verify > report.txt 2>&1` writes them: the report, then its error.
        let merged = try await CLI.run(["-c", "exec \"$0\" verify 2>&1", CLI.binary.path], in: folder, executable: "/bin/sh")
        let lines = merged.stdout.split(separator: "\n")
        #expect(merged.status == 1)
        #expect(lines.first?.hasPrefix("events/announcements.jsonl:3: `prev` does not match") == true, "\(merged.stdout)")
        #expect(lines.last == "error: events/announcements.jsonl: 1 problem found", "\(merged.stdout)")
    }

    @Test("verify --expect-head: the head verify printed holds until the log is cut back; a malformed head is a usage error")
    func verifyExpectedHead() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await CLI.run(["verify"], in: folder)
        let head = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("  head:") }?.split(separator: " ").last.map(String.init))
        #expect(head.hasPrefix("5:") && head.count == 66)

        let holds = try await CLI.run(["verify", "--expect-head", head], in: folder)
        #expect(holds.status == 0)
        #expect(holds.stdout.contains("expected head:       found"))

        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        try (lines.dropLast().joined(separator: "\n") + "\n").write(toFile: log, atomically: false, encoding: .utf8)
        // (The head recorded beside the log would tell: this is the chain alone, and a head.)
        try FileManager.default.removeItem(atPath: log + ".head")
        #expect(try await CLI.run(["verify"], in: folder).status == 0, "the chain alone cannot tell")
        let cut = try await CLI.run(["verify", "--expect-head", head], in: folder)
        #expect(cut.status == 1)
        #expect(cut.stdout.contains("events/announcements.jsonl: the log ends at seq 4, before the recorded head 5: it was cut back"))
        #expect(cut.stdout.contains("expected head:       NOT found"))

        for bad in ["5", "5:abc", "x:\(head.dropFirst(2))", "0:\(head.dropFirst(2))"] {
            let usage = try await CLI.run(["verify", "--expect-head", bad], in: folder)
            #expect(usage.status == 64, "\(bad)")
            #expect(usage.stderr.contains("--expect-head takes SEQ:SHA256"), "\(usage.stderr)")
            #expect(usage.stdout.isEmpty)
        }
    }

    @Test("init and backup count in words that agree with the count: 1 event, 1 live announcement")
    func countsInWords() async throws {
        let folder = try makeFolder(config: "log: events/announcements.jsonl\nseed:\n  - title: Only one\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let initialized = try await CLI.run(["init"], in: folder)
        #expect(initialized.stdout == "events/announcements.jsonl: 1 event, 1 live announcement\n", "\(initialized.stdout)")
        let backedUp = try await CLI.run(["backup", "saved"], in: folder)
        #expect(backedUp.stdout.contains(": 1 event, 1 live announcement"), "\(backedUp.stdout)")
    }

    @Test("verify checks the head recorded beside a log file, as start-up does: a log cut back, emptied or rewritten since is NOT sound, as serve refuses it")
    func verifyRecordedHead() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recorded = try String(contentsOfFile: log + ".head", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let whole = try await CLI.run(["verify"], in: folder)
        #expect(whole.status == 0)
        #expect(whole.stdout.contains("  recorded head:       found (events/announcements.jsonl.head)"), "\(whole.stdout)")

        let text = try String(contentsOfFile: log, encoding: .utf8)
        try "".write(toFile: log, atomically: false, encoding: .utf8)
        let emptied = try await CLI.run(["verify"], in: folder)
        #expect(emptied.status == 1)
        #expect(emptied.stdout.contains("events/announcements.jsonl: the log is empty, but events/announcements.jsonl.head records that it held 5 lines (head \(recorded)): it was cut back, emptied or replaced by an older copy since: the server does not start on it"), "\(emptied.stdout)")
        #expect(emptied.stdout.contains("move the record out of the way first (mv events/announcements.jsonl.head events/announcements.jsonl.head.set-aside)"), "start-up's remedies: \(emptied.stdout)")
        #expect(emptied.stdout.contains("  recorded head:       NOT found (events/announcements.jsonl.head)"))
        #expect(try await CLI.run(["serve", "--port", "0"], in: folder).status == 65, "serve refuses what verify finds")

        try text.replacingOccurrences(of: "Parking", with: "Parked").write(toFile: log, atomically: false, encoding: .utf8)
        let rewritten = try await CLI.run(["verify"], in: folder)
        #expect(rewritten.status == 1)
        #expect(rewritten.stdout.contains("events/announcements.jsonl:5: the SHA-256 of line 5 is "), "\(rewritten.stdout)")
        #expect(rewritten.stdout.contains("line 5 is not the line events/announcements.jsonl.head records (head \(recorded)): it was changed, or the log rewritten or replaced, since: the server does not start on it"), "\(rewritten.stdout)")
        let given = try await CLI.run(["verify", "--expect-head", recorded], in: folder)
        #expect(given.stderr.hasSuffix("1 problem found\n") && !given.stdout.contains("recorded head:"), "the head given and recorded, checked once: \(given.stdout) \(given.stderr)")

        // A snapshot beside the log (a server's, at its stop) that covers lines the log lacks, its
        // head record moved aside: start-up refuses it for the snapshot, and so does verify.
        try text.write(toFile: log, atomically: false, encoding: .utf8)
        #expect(try await ServerProcess(in: folder).stopped() == 0)
        #expect(FileManager.default.fileExists(atPath: log + ".snapshot"))
        try "".write(toFile: log, atomically: false, encoding: .utf8)
        try FileManager.default.moveItem(atPath: log + ".head", toPath: log + ".head.set-aside")
        let snapshotOnly = try await CLI.run(["verify"], in: folder)
        #expect(snapshotOnly.status == 1, "\(snapshotOnly.stdout)")
        #expect(snapshotOnly.stdout.contains("and the snapshot beside it (events/announcements.jsonl.snapshot) may be the only copy of what the log lost: the server does not start on it"), "\(snapshotOnly.stdout)")
        try FileManager.default.removeItem(atPath: log + ".snapshot")
        try FileManager.default.moveItem(atPath: log + ".head.set-aside", toPath: log + ".head")

        // A record that is not one: the problem start-up would stop on.
        try text.write(toFile: log, atomically: false, encoding: .utf8)
        try "not a head\n".write(toFile: log + ".head", atomically: false, encoding: .utf8)
        let damaged = try await CLI.run(["verify"], in: folder)
        #expect(damaged.status == 1)
        #expect(damaged.stdout.contains("the head recorded beside the log is not `SEQ:SHA256`"), "\(damaged.stdout)")
    }

    @Test("errors are one line on stderr with a distinct exit code", arguments: [
        (["replay", "--log", "/nonexistent/log.jsonl"], Int32(66), "error: /nonexistent/log.jsonl: no such log file"),
        (["replay", "--config", "/nonexistent/config.yaml"], Int32(66), "error: /nonexistent/config.yaml: cannot read the config file: No such file or directory"),
        (["replay", "--config", "/"], Int32(66), "error: /: cannot read the config file: Is a directory"),
        // With --log too, the config is still read, and must load.
        (["replay", "--config", "/nonexistent/config.yaml", "--log", "x"], Int32(66), "error: /nonexistent/config.yaml: cannot read the config file"),
        (["history", "--config", "/nonexistent/config.yaml", "--log", "x"], Int32(66), "error: /nonexistent/config.yaml: cannot read the config file"),
        (["replay", "--as-of", "yesterday", "--log", "x"], Int32(64), "--as-of takes an RFC 3339 time"),
        (["history", "--type", "renamed", "--log", "x"], Int32(64), "--type takes created, edited, deleted or erased"),
        (["erase", "1", "--reason", "r", "--by", "", "--log", "x"], Int32(64), "--by must not be empty"),
        (["erase", "1", "--reason", "r", "--by", "two words", "--log", "x"], Int32(64), "--by must be one word"),
        (["verify", "--log", ""], Int32(64), "--log takes a file's path, not an empty one"),
        (["replay", "--config", ""], Int32(64), "--config takes a file's path, not an empty one"),
    ])
    func errors(arguments: [String], status: Int32, message: String) async throws {
        let result = try await CLI.run(arguments)
        #expect(result.status == status)
        #expect(result.stderr.contains(message))
        #expect(result.stdout.isEmpty)
    }

    @Test("erase and upgrade work on an existing log: a mistyped path is a 66, and no log (or folder) is made, nor seeded", arguments: [
        ["erase", "3", "--reason", "personal data", "--by", "root"], ["upgrade"],
    ])
    func changesNeedAnExistingLog(command: [String]) async throws {
        let folder = try makeFolder(config: "seed:\n  - title: One\n  - title: Two\n  - title: Three\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(command + ["--log", "typo/announcments.jsonl"], in: folder)
        #expect(result.status == 66)
        #expect(result.stderr.contains("error: typo/announcments.jsonl: no such log file (`\(command[0])` works on an existing log"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/typo"))
    }

    @Test("a corrupt line stops replay with file:line and exit code 65; a torn tail is only a note")
    func corruptAndTorn() async throws {
        let (folder, log) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let handle = try #require(FileHandle(forWritingAtPath: log))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"seq":6,"type":"cre"#.utf8))
        try handle.close()
        let torn = try await CLI.run(["replay"], in: folder)
        #expect(torn.status == 0)
        #expect(torn.stderr.contains("note: events/announcements.jsonl:6: ignored 20 bytes at the end"))

        var lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[1] = "{oops"
        try lines.joined(separator: "\n").write(toFile: log, atomically: false, encoding: .utf8)
        let corrupt = try await CLI.run(["replay"], in: folder)
        #expect(corrupt.status == 65)
        #expect(corrupt.stderr.hasPrefix("error: events/announcements.jsonl:2: invalid JSON at column 2"))
    }

    @Test("init creates and seeds a log once, then leaves it alone")
    func initSeeds() async throws {
        let folder = try makeFolder(config: "seed:\n  - title: One\n  - title: Two\n    body: <p>2</p>\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try await CLI.run(["init"], in: folder)
        #expect(first.status == 0)
        #expect(first.stdout == "events/announcements.jsonl: 2 events, 2 live announcements\n")
        #expect(first.stderr.contains("seeded an empty log"))
        let second = try await CLI.run(["init"], in: folder)
        #expect(second.stdout == "events/announcements.jsonl: 2 events, 2 live announcements\n")
        #expect(!second.stderr.contains("seeded"))
        let history = try await CLI.run(["history", "--format", "jsonl"], in: folder)
        let lines = history.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains(#""by":"seed""#) })
    }

    @Test("a bad config names its line and column and exits 78")
    func badConfig() async throws {
        let folder = try makeFolder(config: "port: 80\nseed:\n  - title: 42\n  - title: [x]\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["init"], in: folder)
        #expect(result.status == 78)
        #expect(result.stderr == "error: config.yaml:4:12: seed[1].title: expected a string, found a list\n")
        #expect(!FileManager.default.fileExists(atPath: folder + "/events"), "nothing is written")
    }

    @Test("serve listens on the port it prints, answers, and stops cleanly on SIGTERM, releasing the log")
    func serve() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let port = server.port
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/health")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        // The head is the one verify prints for the same log.
        let verified = try await CLI.run(["verify"], in: folder)
        let head = try #require(verified.stdout.split(separator: "\n").first { $0.hasPrefix("  head:") }?.split(separator: " ").last)
        #expect(String(decoding: data, as: UTF8.self) == #"{"status":"ok","seq":5,"head":"\#(head)"}"#)
        #expect(await server.stopped() == 0)
        let again = try await CLI.run(["init"], in: folder)
        #expect(again.status == 0, "the log's lock was released: \(again.stderr)")
    }

    @Test("serve logs one line per request: UTC time to the millisecond, level, method, quoted path, status, duration, request id")
    func accessLog() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, errorLog: errorLog)
        _ = try await URLSession.shared.data(from: URL(string: "\(server.url)/health")!)
        _ = try await URLSession.shared.data(from: URL(string: "\(server.url)/announcements/99")!)
        #expect(await server.stopped() == 0)
        let lines = try String(contentsOfFile: errorLog, encoding: .utf8).split(separator: "\n")
        let access = lines.filter { $0.contains(" GET ") }
        #expect(access.count == 2, "\(lines)")
        let shape = #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info announcements: GET "\/health" 200 \d+\.\d{3}ms .*request\.id=[0-9a-f]{6}-[0-9a-f]+/#
        #expect(access.first.map { $0.wholeMatch(of: shape) != nil } == true, "\(access)")
        #expect(access.last?.contains(#"GET "/announcements/99" 404"#) == true, "\(access)")
    }

    @Test("serve stops cleanly on SIGINT (Ctrl-C) too: a write acknowledged before it is kept, and the lock released")
    func serveInterrupted() async throws {
        let folder = try makeFolder(config: "log: events/announcements.jsonl\ntokens:\n  alice: alice-secret\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let posted = try await CLI.run(["post", "--title", "Before Ctrl-C", "--server", server.url, "--token", "alice-secret"])
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(await server.stopped(interrupt: true) == 0)
        #expect(server.process.terminationReason == .exit, "it exited by itself, not killed by the signal")
        let replayed = try await CLI.run(["replay", "--format", "json"], in: folder)
        #expect(replayed.stdout.contains(#""title":"Before Ctrl-C""#))
        let again = try await CLI.run(["init"], in: folder)
        #expect(again.status == 0, "the log's lock was released: \(again.stderr)")
    }

    @Test("serve on a port already in use says so in one line, with the setting that fixes it")
    func portInUse() async throws {
        let (folder, _) = try await makeLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        defer { server.stop() }
        let other = try makeFolder(config: "log: log.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let result = try await CLI.run(["serve", "--port", String(server.port)], in: other)
        #expect(result.status == 69)
        #expect(result.stderr.hasSuffix("error: cannot listen on 127.0.0.1:\(server.port): the address is already in use (another server?); choose another port with --port or `port` in the config (0 takes any free port)\n"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other + "/log.jsonl"), "found before the log was opened: no log made")
    }

    @Test(
        "serve on an IPv6 address says where it listens as a URL says it: the address in brackets",
        .enabled(if: (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?.contains("00000000000000000000000000000001") ?? true, "needs the IPv6 loopback address ::1")
    )
    func ipv6Listening() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder, arguments: ["serve", "--host", "::1", "--port", "0"])
        #expect(server.listening == "http://[::1]:\(server.port)")
        #expect(await server.stopped() == 0)
    }

    @Test("a port written into `host` is named as such, in the config an invalid config (78, its line), in --host where it cannot listen; serve stops before it makes or seeds a log")
    func portInHost() async throws {
        let folder = try makeFolder(config: "host: localhost:8080\nlog: events/announcements.jsonl\nseed:\n  - title: One\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await CLI.run(["serve"], in: folder)
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.hasSuffix("config.yaml:1:7: host: localhost:8080 is a host with a port: write the port under `port`, and `host: localhost`\n"), "\(result.stderr)")
        let given = try await CLI.run(["serve", "--host", "localhost:8080"], in: folder)
        #expect(given.status == 78, "the config is read first: \(given.stderr)")
        try "log: events/announcements.jsonl\nseed:\n  - title: One\n".write(toFile: folder + "/config.yaml", atomically: true, encoding: .utf8)
        let option = try await CLI.run(["serve", "--host", "localhost:8080"], in: folder)
        #expect(option.status == 69, "\(option.stderr)")
        #expect(option.stderr.hasSuffix("error: cannot listen on localhost:8080:8080: localhost:8080 is not a host name or address: write the port under `port` (or --port), and `host: localhost`\n"), "\(option.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/events"), "nothing made on disk")
    }

    @Test("serve without a writer's token says the API is read-only, naming the variable a writer's token waits for; under `reads: token` without a token, that nothing can be read either", arguments: [
        ("tokens:\n  editor: env:ANNOUNCEMENTS_TEST_UNSET_WRITER\n  audit: {token: a-secret, role: auditor}\n",
         "no token may write: the API is read-only until ANNOUNCEMENTS_TEST_UNSET_WRITER is set (the token of `editor`, role editor, is read from it; see `tokens` in the config)"),
        ("", "no token may write: the API is read-only (add a token of role author, editor or admin under `tokens` in the config)"),
        ("reads: token\ntokens:\n  editor: env:ANNOUNCEMENTS_TEST_UNSET_WRITER\n",
         "no token may read, and `reads: token` asks one for every read of the announcements: nothing can be read until a token is set (see `tokens` in the config)"),
    ])
    func readOnlyWarning(tokens: String, warning: String) async throws {
        let folder = try makeFolder(config: "log: log.jsonl\n" + tokens)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, errorLog: errorLog)
        #expect(await server.stopped() == 0)
        let text = try String(contentsOfFile: errorLog, encoding: .utf8)
        #expect(text.contains(" warning announcements: \(warning)\n"), "\(text)")
    }

    @Test("serve names the tokens that are off because their variables are unset or empty, beside those enabled")
    func tokensOff() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\ntokens:\n  editor: a-secret\n  audit: {token: env:ANNOUNCEMENTS_TEST_UNSET_AUDITOR, role: auditor}\n  boss: {token: env:ANNOUNCEMENTS_TEST_EMPTY_ADMIN, role: admin}\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let errorLog = folder + "/stderr.log"
        let server = try await ServerProcess(in: folder, environment: ["ANNOUNCEMENTS_TEST_EMPTY_ADMIN": ""], errorLog: errorLog)
        #expect(await server.stopped() == 0)
        let text = try String(contentsOfFile: errorLog, encoding: .utf8)
        #expect(text.contains(" notice announcements: tokens off, their variables unset or empty tokens=audit (auditor) from ANNOUNCEMENTS_TEST_UNSET_AUDITOR, boss (admin) from ANNOUNCEMENTS_TEST_EMPTY_ADMIN\n"), "\(text)")
        #expect(text.contains(" info announcements: tokens enabled reads=public tokens=editor (editor)\n"), "\(text)")
    }

    @Test("serve on a host name that does not resolve says so, with exit 69 and the setting that fixes it")
    func unknownHost() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // `.invalid` is reserved (RFC 2606): no resolver knows it.
        let result = try await CLI.run(["serve", "--host", "no-such-host.invalid", "--port", "0"], in: folder)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("error: cannot listen on no-such-host.invalid:0: \"no-such-host.invalid\" is not a name this machine can resolve ("), "\(result.stderr)")
        #expect(result.stderr.hasSuffix("choose another with --host or `host` in the config\n"), "\(result.stderr)")
    }

    @Test("the binary alone, copied into an empty folder, serves its OpenAPI document")
    func selfContained() async throws {
        let folder = try makeFolder(config: "log: log.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let copy = URL(fileURLWithPath: folder + "/announcements")
        // (Off the pool: writing the debug binary's 120 MB on a busy machine held one of its
        // two threads for seconds.)
        try await offPool { try Self.copyExecutable(CLI.binary, to: copy) }
        let server = try await ServerProcess(in: folder, binary: copy)
        defer { server.stop() }
        let connection = try RawConnection(port: server.port)
        #expect(connection.send("GET /openapi.yaml HTTP/1.1\r\nHost: x\r\n\r\n"))
        let response = await connection.readResponse(seconds: 10)
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response.prefix(300))")
        #expect(response.contains("\r\n\r\nopenapi: 3.1.0\n"))
    }

    /// Copies an executable, its descriptor closed on exec: otherwise a child that another test
    /// forks while the copy is being written holds it open, and running the copy fails with
    /// ETXTBSY ("text file busy") until that child runs its own program.
    static func copyExecutable(_ source: URL, to target: URL) throws {
        let bytes = try Data(contentsOf: source)
        let fd = open(target.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            written += count
        }
    }

    @Test("a log that cannot be made (a file where its folder goes, a folder where it goes) stops serve and init with 73, naming what is in the way", arguments: ["serve", "init"])
    func logCannotBeMade(command: String) async throws {
        let folder = try makeFolder(config: "log: taken/log.jsonl\n")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/taken", contents: Data()))
        let underFile = try await CLI.run([command] + (command == "serve" ? ["--port", "0"] : []), in: folder)
        #expect(underFile.status == 73 && underFile.stderr.contains("taken/log.jsonl: taken is not a folder"), "\(underFile.stderr)")
        try FileManager.default.createDirectory(atPath: folder + "/log.jsonl", withIntermediateDirectories: false)
        let folderThere = try await CLI.run([command, "--log", "log.jsonl"] + (command == "serve" ? ["--port", "0"] : []), in: folder)
        #expect(folderThere.status == 73 && folderThere.stderr.contains("log.jsonl: cannot open the log for writing: Is a directory"), "\(folderThere.stderr)")
    }

    @Test("a folder without config.yaml gets a clear error")
    func noConfig() async throws {
        let result = try await CLI.run(["verify"], in: NSTemporaryDirectory())
        #expect(result.status == 66)
        #expect(result.stderr.contains("no config.yaml in this folder: pass --config FILE or --log FILE"))
    }
}
