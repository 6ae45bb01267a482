import AnnouncementsClient
import Foundation
import Testing

/// Reads after a write send its `Log-Seq` as `Min-Seq`, and recover from a seq the server will
/// not reach (a log restored from an older backup) or has not reached yet (a node behind).
@Suite struct ReadYourWritesTests {
    /// A client of the fake server's `mode` (see `withFakeServer`), whose record starts empty.
    func client(_ url: URL, _ mode: String, timeout: TimeInterval = testTimeout, writeRetries: Int = 2) -> AnnouncementsClient {
        fakeMinSeqs.withLock { $0[mode] = [] }
        return AnnouncementsClient(baseURL: url.appendingPathComponent(mode), token: "alice-secret", timeout: timeout, writeRetries: writeRetries)
    }

    func seen(_ mode: String) -> [String] {
        fakeMinSeqs.withLock { $0[mode] ?? [] }
    }

    @Test("no Min-Seq before a write; after one, reads of announcements and lists send its Log-Seq, health does not")
    func sendsMinSeq() async throws {
        try await withFakeServer { url in
            let client = client(url, "plain")
            #expect(try await client.announcement(id: 1).title == "none")
            _ = try await client.create(title: "Posted", body: nil)
            #expect(try await client.announcement(id: 1).title == "9")
            #expect(try await client.summaries().items.first?.title == "9")
            #expect(try await client.announcements().items.first?.title == "9")
            _ = try await client.health()
            #expect(seen("plain") == ["-", "9", "list 9", "list 9", "health -"])
        }
    }

    @Test("a read with Min-Seq answered 502 (a proxy whose node died) is sent again, with it")
    func retriedAfterGateway() async throws {
        try await withFakeServer { url in
            let client = client(url, "gateway")
            _ = try await client.create(title: "Posted", body: nil)
            #expect(try await client.announcement(id: 1).title == "9")
            #expect(seen("gateway") == ["9", "9"])
        }
    }

    @Test("a 409 that is not about Min-Seq is the read's error, and the seq is kept")
    func keepsOnUnrelatedConflict() async throws {
        try await withFakeServer { url in
            let client = client(url, "unrelated")
            _ = try await client.create(title: "Posted", body: nil)
            await #expect(throws: ClientError.self) { try await client.announcement(id: 1) }
            #expect(try await client.summaries().items.first?.title == "9")
            #expect(seen("unrelated") == ["9", "list 9"])
        }
    }

    @Test("a read with Min-Seq waits for a node's 503 past the client's timeout (the node waits 5 s first), then is sent again")
    func waitsForSlowNode() async throws {
        try await withFakeServer { url in
            // The node answers after 6 s; the client's own timeout is 5 s (not shorter: on a
            // machine this busy, a request to the fake server in this process took over a second).
            let client = client(url, "slow", timeout: 5)
            _ = try await client.create(title: "Posted", body: nil)
            #expect(try await client.announcement(id: 1).title == "9")
            // The read was sent again only once the node had answered 503. A client that gave
            // up at its own 5 s would have sent it again while the node still waited (["9", "9"],
            // the "503" after). Sends after the second are not asserted: on a starved machine a
            // read may be sent once more after a dropped connection, as reads may be.
            #expect(seen("slow").prefix(3) == ["9", "503", "9"])
        }
    }

    @Test("a 409 (the server's log ends before the seq: restored from an older backup): the read is sent again without it, and so are the next")
    func forgetsBeyondLog() async throws {
        try await withFakeServer { url in
            let client = client(url, "beyond")
            _ = try await client.create(title: "Posted", body: nil)
            #expect(try await client.announcement(id: 1).title == "none")
            #expect(try await client.announcement(id: 1).title == "none")
            #expect(seen("beyond") == ["9", "-", "-"])
        }
    }

    @Test("a 503 (a node behind) is sent again with Min-Seq after its Retry-After; still behind after writeRetries, the seq is forgotten")
    func retriesBehind() async throws {
        try await withFakeServer { url in
            let once = client(url, "behind-1")
            _ = try await once.create(title: "Posted", body: nil)
            #expect(try await once.announcement(id: 1).title == "9")
            #expect(seen("behind-1") == ["9", "9"])

            let stuck = client(url, "behind-99", writeRetries: 2)
            _ = try await stuck.create(title: "Posted", body: nil)
            #expect(try await stuck.announcement(id: 1).title == "none")
            #expect(seen("behind-99") == ["9", "9", "9", "-"])
        }
    }
}
