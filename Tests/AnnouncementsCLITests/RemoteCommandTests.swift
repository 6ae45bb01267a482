import Foundation
import Testing
import AnnouncementsClient
@testable import AnnouncementsCLI

@Suite struct RemoteCommandTests {
    static let config = """
        log: events/announcements.jsonl
        tokens:
          alice: alice-secret
          bob: bob-secret
        seed:
          - title: Welcome
            body: "<p>Hello</p>"
        """

    @Test("post, edit, show, list and delete through a running server; history shows each change and who made it")
    func endToEnd() async throws {
        let folder = try makeFolder(config: Self.config)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let alice = ["--server", server.url, "--token", "alice-secret"]
        // Bob uses the environment instead of options.
        let bob = ["ANNOUNCEMENTS_SERVER": server.url, "ANNOUNCEMENTS_TOKEN": "bob-secret"]

        let posted = try await CLI.run(["post", "--title", "Fire drill", "--body-file", "-"] + alice, input: "<p>At 10:00</p>\n")
        #expect(posted.status == 0, "\(posted.stderr)")
        #expect(posted.stdout.replacing(try Regex(#""2-2-[0-9a-f]{8}""#), with: "TAG") == "id:       2\ntitle:    Fire drill\nrevision: TAG\nbody:\n<p>At 10:00</p>\n\n")

        let edited = try await CLI.run(["edit", "2", "--title", "Fire drill at 11:00"], environment: bob)
        #expect(edited.status == 0, "\(edited.stderr)")
        #expect(edited.stdout.replacing(try Regex(#""2-3-[0-9a-f]{8}""#), with: "TAG").hasPrefix("id:       2\ntitle:    Fire drill at 11:00\nrevision: TAG\n"))

        let shown = try await CLI.run(["show", "2", "--format", "json"], environment: bob)
        #expect(shown.stdout == #"{"id":2,"title":"Fire drill at 11:00","body":"<p>At 10:00</p>\n"}"# + "\n")

        let listed = try await CLI.run(["list", "--format", "json"], environment: bob)
        #expect(listed.stdout == #"{"total":2,"offset":0,"announcements":[{"id":1,"title":"Welcome"},{"id":2,"title":"Fire drill at 11:00"}]}"# + "\n")
        let full = try await CLI.run(["list", "--api-version", "1.0", "--max", "1", "--offset", "1"], environment: bob)
        #expect(full.stdout == "ID  TITLE                BODY\n2   Fire drill at 11:00  16 bytes\n2-2 of 2\n")
        let byTitle = try await CLI.run(["list", "--sort", "title", "--order", "desc", "--format", "json"], environment: bob)
        #expect(byTitle.stdout == #"{"total":2,"offset":0,"announcements":[{"id":1,"title":"Welcome"},{"id":2,"title":"Fire drill at 11:00"}]}"# + "\n")
        let newestFirst = try await CLI.run(["list", "--order", "desc", "--format", "json"], environment: bob)
        #expect(newestFirst.stdout == #"{"total":2,"offset":0,"announcements":[{"id":2,"title":"Fire drill at 11:00"},{"id":1,"title":"Welcome"}]}"# + "\n")
        let badSort = try await CLI.run(["list", "--sort", "date"], environment: bob)
        #expect(badSort.status == 64)
        #expect(badSort.stderr.contains("--sort"), "\(badSort.stderr)")

        let refused = try await CLI.run(["delete", "2", "--server", server.url, "--token", "wrong"])
        #expect(refused.status == 77)
        #expect(refused.stderr.hasPrefix("error: the server answered 401: "))

        let deleted = try await CLI.run(["delete", "2"] + alice)
        #expect(deleted.status == 0)
        #expect(deleted.stdout == "deleted announcement 2\n")

        let gone = try await CLI.run(["show", "2"], environment: bob)
        #expect(gone.status == 1)
        #expect(gone.stderr == "error: the server answered 404: announcement 2 does not exist (it may have been deleted)\n")

        let history = try await CLI.run(["history", "2"], in: folder)
        let rows = history.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(rows.map { [String($0[2]), String($0[3])] } == [["created", "alice"], ["edited", "bob"], ["deleted", "alice"]])
        #expect(await server.stopped() == 0)
    }

    @Test("edit and delete --if-revision: made at the revision show printed (quoted or not), refused once someone else changed it (exit 1, nothing changed); a malformed one is a usage error")
    func ifRevision() async throws {
        let folder = try makeFolder(config: Self.config)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let alice = ["--server", server.url, "--token", "alice-secret"]
        func revision(_ id: Int) async throws -> String {
            let shown = try await CLI.run(["show", String(id)] + alice)
            let line = shown.stdout.split(separator: "\n").first { $0.hasPrefix("revision: ") }
            return String(line?.dropFirst("revision: ".count) ?? "")
        }

        let first = try await revision(1)
        #expect(first.hasPrefix("\"1-1-"), "\(first)")
        let edited = try await CLI.run(["edit", "1", "--title", "Welcome, all", "--if-revision", first] + alice)
        #expect(edited.status == 0, "\(edited.stderr)")
        // The shell's quotes gone, as `--if-revision "1-2-…"` leaves it.
        let second = try await revision(1)
        let unquoted = try await CLI.run(["edit", "1", "--title", "Welcome, everyone", "--if-revision", String(second.dropFirst().dropLast())] + alice)
        #expect(unquoted.status == 0, "\(unquoted.stderr)")

        let stale = try await CLI.run(["edit", "1", "--title", "Lost update", "--if-revision", second] + alice)
        #expect(stale.status == 1)
        #expect(stale.stderr.hasPrefix("error: changed by someone else since it was fetched: "), "\(stale.stderr)")
        let staleDelete = try await CLI.run(["delete", "1", "--if-revision", first] + alice)
        #expect(staleDelete.status == 1, "\(staleDelete.stderr)")
        let shown = try await CLI.run(["show", "1", "--format", "json"] + alice)
        #expect(shown.stdout.hasPrefix(#"{"id":1,"title":"Welcome, everyone""#), "\(shown.stdout)")

        // Refused before the server is asked: malformed, or never a revision of this announcement
        // (a seq, `*`, another's), which the server would refuse as changed by someone else.
        for bad in ["", "\"\"", "1 2", "a\"b", "8", "*", "1-x-abc", "1-2-"] {
            let refused = try await CLI.run(["delete", "1", "--if-revision", bad] + alice)
            #expect(refused.status == 64 && refused.stderr.contains("--if-revision takes a revision as show prints it (like \"1-8-6c5a5ef9\")"), "\(bad): \(refused.stderr)")
        }
        let another = try await CLI.run(["edit", "1", "--title", "T", "--if-revision", "\"2-2-6c5a5ef9\""] + alice)
        #expect(another.status == 64 && another.stderr.contains("is a revision of announcement 2, not of 1"), "\(another.stderr)")
        let deleted = try await CLI.run(["delete", "1", "--if-revision", try await revision(1)] + alice)
        #expect(deleted.status == 0 && deleted.stdout == "deleted announcement 1\n", "\(deleted.stderr)")
        #expect(await server.stopped() == 0)
    }

    @Test("erase --server: a running server erases with an admin's token (its name the writer); again is a 410, an editor's token a 77; a stopped log's options are refused beside it; erasing the running server's log directly names --server")
    func eraseThroughServer() async throws {
        let folder = try makeFolder(config: Self.config.replacingOccurrences(of: "  bob: bob-secret\n", with: "  bob: bob-secret\n  root: {token: root-secret, role: admin}\n"))
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let root = ["--server", server.url, "--token", "root-secret"]
        let erased = try await CLI.run(["erase", "1", "--reason", "personal data"] + root)
        #expect(erased.status == 0, "\(erased.stderr)")
        #expect(erased.stdout == "erased announcement 1: event 2; sealed line 1\n")
        let again = try await CLI.run(["erase", "1", "--reason", "personal data"] + root)
        #expect(again.status == 1 && again.stderr == "error: the server answered 410: announcement 1 was erased (event 2): its texts are gone\n", "\(again.stderr)")
        let posted = try await CLI.run(["post", "--title", "Fire drill", "--server", server.url, "--token", "alice-secret"])
        #expect(posted.status == 0, "\(posted.stderr)")
        let editor = try await CLI.run(["erase", "2", "--reason", "personal data", "--server", server.url, "--token", "alice-secret"])
        #expect(editor.status == 77 && editor.stderr.contains("this needs role admin"), "\(editor.stderr)")
        let mixed = try await CLI.run(["erase", "2", "--reason", "x", "--by", "root"] + root)
        #expect(mixed.status == 64 && mixed.stderr.contains("--by is for a stopped log"), "\(mixed.stderr)")
        let locked = try await CLI.run(["erase", "2", "--reason", "x"], in: folder)
        #expect(locked.status == 75 && locked.stderr.contains("or erase through the server that holds it: announcements erase 2 --reason TEXT --server URL"), "\(locked.stderr)")
        #expect(await server.stopped() == 0)
        let history = try await CLI.run(["history", "1"], in: folder)
        #expect(history.stdout.contains("erased   root") && !history.stdout.contains("Welcome"), "\(history.stdout)")
    }

    @Test("a bad ANNOUNCEMENTS_SERVER or ANNOUNCEMENTS_TOKEN is named as the variable, not as an option that was not given")
    func environmentNamed() async throws {
        let server = try await CLI.run(["list"], environment: ["ANNOUNCEMENTS_SERVER": "garbage"])
        #expect(server.status == 64 && server.stderr == "error: ANNOUNCEMENTS_SERVER must be an http:// or https:// URL, like http://127.0.0.1:8080; got \"garbage\"\n", "\(server.stderr)")
        let token = try await CLI.run(["list", "--server", "http://127.0.0.1:1"], environment: ["ANNOUNCEMENTS_TOKEN": "s3cret\nagain"])
        #expect(token.status == 64 && token.stderr.hasPrefix("error: ANNOUNCEMENTS_TOKEN must be visible ASCII characters") && !token.stderr.contains("s3cret"), "named, and not echoed: \(token.stderr)")
    }

    @Test("--help says where each command's server comes from: list's from $ANNOUNCEMENTS_SERVER by default, erase's only from --server")
    func serverHelp() async throws {
        let list = try await CLI.run(["list", "--help"])
        #expect(list.stdout.contains("default: $ANNOUNCEMENTS_SERVER"), "\(list.stdout)")
        let erase = try await CLI.run(["erase", "--help"])
        let server = erase.stdout.components(separatedBy: "--server <url>").last ?? ""
        #expect(!server.contains("default: $ANNOUNCEMENTS_SERVER") && server.contains("$ANNOUNCEMENTS_SERVER is"), "erase goes to a server only when --server names it: \(erase.stdout)")
    }

    @Test("search and list --api-version 3.0: when each changed, and v3's fields in JSON")
    func searchAndVersionThree() async throws {
        let folder = try makeFolder(config: Self.config)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try await ServerProcess(in: folder)
        let alice = ["--server", server.url, "--token", "alice-secret"]
        let posted = try await CLI.run(["post", "--title", "Café reopens", "--body", "<p>Fresh coffee</p>"] + alice)
        #expect(posted.status == 0, "\(posted.stderr)")

        let found = try await CLI.run(["search", "cafe", "re"] + alice)
        #expect(found.status == 0, "\(found.stderr)")
        let time = try Regex(#"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"#)
        #expect(found.stdout.replacing(time, with: "TIME") == "ID  UPDATED                   TITLE\n2   TIME  Café reopens\n1-1 of 1\n")
        // No hits: the same columns as a search that finds some.
        let nothing = try await CLI.run(["search", "tea"] + alice)
        #expect(nothing.status == 0 && nothing.stdout == "ID  UPDATED  TITLE\nnone of 0\n", "\(nothing.stdout)")
        let json = try await CLI.run(["search", "coffee", "--format", "json"] + alice)
        #expect(json.stdout.replacing(time, with: "TIME") == #"{"total":1,"offset":0,"announcements":[{"id":2,"title":"Café reopens","createdAt":"TIME","updatedAt":"TIME","revision":2,"excerpt":"Fresh coffee"}]}"# + "\n")
        let listed = try await CLI.run(["list", "--api-version", "3", "--format", "json", "--max", "1"] + alice)
        #expect(listed.stdout.replacing(time, with: "TIME") == #"{"total":2,"offset":0,"announcements":[{"id":1,"title":"Welcome","createdAt":"TIME","updatedAt":"TIME","revision":1,"excerpt":"Hello"}]}"# + "\n")
        let none = try await CLI.run(["search"] + alice)
        #expect(none.status == 64)
        // Words without a word in them: the server's rule, found before it is asked.
        let refused = try await CLI.run(["search"] + alice + ["--", "--"])
        #expect(refused.status == 64)
        #expect(refused.stderr.hasPrefix("Error: the search holds no word to search for (letters or digits)."), "\(refused.stderr)")
        #expect(await server.stopped() == 0)
    }

    @Test("errors: an unreachable server in one line, a bad --server, and a server's refusal", arguments: [
        (["list", "--server", "http://127.0.0.1:1"], Int32(69), "error: cannot reach the server at 127.0.0.1:1 ("),
        (["show", "1", "--server", "ftp://example.com"], Int32(64), "error: --server takes an http:// or https:// URL"),
        (["list", "--server", "http://127.0.0.1:99999"], Int32(64), "error: --server's port must be 1 to 65535; got 99999 in \"http://127.0.0.1:99999\"\n"),
        (["post", "--title", "x", "--server", "http://127.0.0.1:1", "--body", "a", "--body-file", "b"], Int32(64), "Error: Use --body or --body-file, not both."),
        (["edit", "1", "--server", "http://127.0.0.1:1"], Int32(64), "Error: Nothing to change"),
        (["post", "--title", "x", "--server", "http://127.0.0.1:1", "--body-file", "/nonexistent/body.html"], Int32(66), "error: /nonexistent/body.html: cannot read the body file: no such file\n"),
        (["post", "--title", "x", "--server", "http://127.0.0.1:1", "--body-file", "/"], Int32(66), "error: /: cannot read the body file: it is a folder\n"),
        (["list", "--server", "http://127.0.0.1:1", "--timeout", "0"], Int32(64), "error: --timeout must be more than 0 seconds and at most 3600; got 0"),
        (["list", "--server", "http://127.0.0.1:1", "--timeout", "3600.5"], Int32(64), "error: --timeout must be more than 0 seconds and at most 3600; got 3600.5"),
        // An id is 1 or more, before a server is asked; a token a header cannot carry is not
        // dropped without a word; history reads a server only with --follow.
        (["show", "0", "--server", "http://127.0.0.1:1"], Int32(64), "Error: an announcement's id is 1 or more; got 0."),
        (["delete", "0", "--server", "http://127.0.0.1:1"], Int32(64), "Error: an announcement's id is 1 or more; got 0."),
        (["list", "--server", "http://127.0.0.1:1", "--token", "two words"], Int32(64), "error: --token must be visible ASCII characters, without spaces or line breaks"),
        (["history", "3", "--server", "http://127.0.0.1:1"], Int32(64), "Error: --server, --token and --timeout go with --follow"),
        (["search", "%", "--server", "http://127.0.0.1:1"], Int32(64), "Error: the search holds no word to search for (letters or digits)."),
        (["search", "a", "b", "c", "d", "e", "f", "g", "h", "i", "--server", "http://127.0.0.1:1"], Int32(64), "Error: the search holds 9 words; a search takes at most 8."),
        (["search", String(repeating: "a", count: 201), "--server", "http://127.0.0.1:1"], Int32(64), "Error: the search is 201 characters long; a search takes at most 200."),
    ])
    func errors(arguments: [String], status: Int32, message: String) async throws {
        let result = try await CLI.run(arguments)
        #expect(result.status == status)
        #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
        if status == 69 { #expect(result.stderr.split(separator: "\n").count == 1) }
    }

    @Test("an error answer without this API's message (another program on the port, a proxy's path) is 76, not a refusal's 1; a proxy's 502 or 503 page stays a passing failure")
    func foreignAnswer() throws {
        let foreign = ClientError.status(code: 404, message: "not found" + ClientError.foreignAnswer, fieldErrors: [])
        #expect(CLIError(foreign).code == .protocolError && CLIError(foreign).message.hasSuffix("is --server this API's address?"), "\(CLIError(foreign).message)")
        #expect(CLIError(.status(code: 404, message: "announcement 9 does not exist", fieldErrors: [])).code == .failure, "the API's own 404")
        #expect(CLIError(.status(code: 502, message: "bad gateway" + ClientError.foreignAnswer, fieldErrors: [])).code == .failure, "a proxy's page for a node it cannot reach")
    }

    @Test("a write that got no answer after its tries (or a proxy's 502 or 504) says it may have been made; a refusal, or the server's own 503, says nothing more")
    func writeMayHaveLanded() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/announcements"))
        let mayHave = "; the write may have been made all the same: look (`announcements show ID`, `list`) before sending it again"
        // (A connection cut mid-answer is `badServerResponse` or `unknown` on Linux.)
        let cut: [ClientError] = [URLError.Code.timedOut, .networkConnectionLost, .badServerResponse, .unknown].map { .unreachable(url: url, underlying: URLError($0)) }
        for error in cut + [.status(code: 504, message: "gateway timeout", fieldErrors: [])] {
            #expect(CLIError(writing: error).message.hasSuffix(mayHave), "\(error)")
            #expect(!CLIError(error).message.hasSuffix(mayHave), "a read says nothing of writes: \(error)")
        }
        for error in [ClientError.unreachable(url: url, underlying: URLError(.cannotConnectToHost)), .unreachable(url: url, underlying: URLError(.cannotFindHost)), .status(code: 503, message: "nothing was written: retry", fieldErrors: []), .status(code: 422, message: "invalid", fieldErrors: [])] {
            #expect(!CLIError(writing: error).message.contains("may have been made"), "\(error)")
        }
    }

    @Test("--timeout (or ANNOUNCEMENTS_TIMEOUT) bounds the wait for an answer: a server that never answers is exit 69")
    func timeout() async throws {
        // A socket that listens and never accepts: connections complete (the kernel's backlog), no answer comes.
        let listener = tcpSocket()
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        try #require(bound)
        let server = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let byOption = try await CLI.run(["list", "--server", server, "--timeout", "0.5"], timeout: 60)
        #expect(byOption.status == 69, "\(byOption.stderr)")
        #expect(byOption.stderr == "error: the server at 127.0.0.1:\(UInt16(bigEndian: address.sin_port)) did not answer in time\n", "\(byOption.stderr)")
        let byEnvironment = try await CLI.run(["list", "--server", server], environment: ["ANNOUNCEMENTS_TIMEOUT": "0.5"], timeout: 60)
        #expect(byEnvironment.status == 69 && byEnvironment.stderr.contains("did not answer in time"), "\(byEnvironment.stderr)")
        let bad = try await CLI.run(["list", "--server", server], environment: ["ANNOUNCEMENTS_TIMEOUT": "soon"])
        #expect(bad.status == 64 && bad.stderr.contains("ANNOUNCEMENTS_TIMEOUT must be a number of seconds"), "\(bad.stderr)")
    }
}
