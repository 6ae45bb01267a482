@testable import AnnouncementsClient
import Foundation
import Synchronization
import Testing

@Suite struct ClientTests {
    @Test("reads in both versions: v1 lists full announcements, v2 summaries, one announcement and health in either")
    func reads() async throws {
        try await withServer { url in
            for version in AnnouncementsClient.APIVersion.allCases {
                let client = AnnouncementsClient(baseURL: url, version: version, timeout: testTimeout)
                let full = try await client.announcements(max: 2)
                #expect(full.items.map(\.title) == ["Announcement 1", "Announcement 2"])
                #expect(full.items.map(\.body) == ["<p>Body 1</p>", "<p>Body 2</p>"])
                #expect(full.total == 3)
                #expect(full.hasMore)
                let summaries = try await client.summaries(offset: 1, max: 5, sort: .title, order: .desc)
                #expect(summaries.items == [AnnouncementSummary(id: 2, title: "Announcement 2"), AnnouncementSummary(id: 1, title: "Announcement 1")])
                #expect(!summaries.hasMore)
                let one = try await client.announcement(id: 3)
                #expect(one.title == "Announcement 3")
                #expect(one.body == "<p>Body 3</p>")
                let suffix = version == .v3 ? "-v3" : ""
                #expect(one.revision?.wholeMatch(of: try Regex(#""3-3-[0-9a-f]{8}"# + suffix + #"""#)) != nil, "\(one.revision ?? "none")")
                #expect((one.details?.revisionSeq == 3) == (version == .v3), "v3 sends the details")
                let health = try await client.health()
                #expect(health.status == "ok" && health.seq == 3 && health.reason == nil)
                #expect(health.head?.hasPrefix("3:") == true && health.head?.count == 66)
                #expect(one.revision?.dropFirst(5).prefix(8) == health.head?.dropFirst(2).prefix(8), "the tag names line 3 as the head does")
            }
        }
    }

    @Test("a client let go invalidates its session (which kept its delegate, its connections and libcurl's handles until then)")
    func sessionInvalidated() async throws {
        try await withServer { url in
            var delegate: RedirectRefusal?
            do {
                let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
                _ = try await client.health()
                delegate = client.session.delegate as? RedirectRefusal
                #expect(delegate?.sessionInvalidated.load(ordering: .relaxed) == false)
            }
            let deadline = ContinuousClock.now + .seconds(10)
            while delegate?.sessionInvalidated.load(ordering: .relaxed) == false, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(delegate?.sessionInvalidated.load(ordering: .relaxed) == true, "the session was never invalidated")
        }
    }

    @Test("every request says its version: the lists theirs, the rest the configured one")
    func versionHeader() async throws {
        try await withFakeServer { url in
            let v1 = AnnouncementsClient(baseURL: url, version: .v1, timeout: testTimeout)
            let summaries = try await v1.summaries()
            let announcements = try await v1.announcements()
            #expect(summaries.items.first?.title == "2.0")
            #expect(announcements.items.first?.title == "1.0")
            #expect(try await v1.announcement(id: 4).title == "1.0")
            #expect(try await v1.health().status == "1.0")
            let v2 = AnnouncementsClient(baseURL: url, version: .v2, timeout: testTimeout)
            #expect(try await v2.announcement(id: 4).title == "2.0")
        }
    }

    @Test("the v2 flow of the original app: list summaries, then fetch the tapped one")
    func listThenDetail() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            let list = try await client.summaries()
            let tapped = try #require(list.items.last)
            let detail = try await client.announcement(id: tapped.id)
            #expect(detail.id == tapped.id)
            #expect(detail.title == tapped.title)
            #expect(detail.body == "<p>Body 3</p>")
        }
    }

    @Test("v3: entries carry when each was created and changed, its revision and an excerpt; search finds words")
    func entriesAndSearch() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let before = Date()
            let created = try await client.create(title: "Café reopens", body: "<p>Fresh <b>coffee</b> from Monday</p>")
            let page = try await client.entries(max: 10, sort: .id, order: .desc)
            let entry = try #require(page.items.first)
            #expect(entry.id == created.id)
            let details = try #require(entry.details)
            #expect(details.excerpt == "Fresh coffee from Monday")
            #expect(details.createdAt == details.updatedAt)
            #expect(abs(details.createdAt.timeIntervalSince(before)) < 60)
            #expect(AnnouncementDetails.serverTime(details.createdAt).hasSuffix("Z"))
            let found = try await client.search("cafe mon")
            #expect(found.items.map(\.id) == [created.id])
            #expect(found.total == 1)
            #expect(try await client.search("body").items.map(\.id) == [3, 2, 1], "bodies hold it; newest first")
            // A `+` reaches the server as itself, not as a space (which would end the last word).
            #expect(try await client.search("mon+").items.map(\.id) == [created.id], "mon+ starts Monday")
            #expect(try await client.search("mon ").items.isEmpty, "mon with a space after is a whole word")
            await #expect(throws: ClientError.self) { _ = try await client.search("  ") }
            do throws(ClientError) {
                _ = try await client.search("  ")
            } catch {
                #expect(error.statusCode == 400)
            }
        }
    }

    @Test("erase: an admin's erasure answers its event and the lines it sealed; the texts are gone from the feed; again is a 410, an editor's a 403")
    func erase() async throws {
        try await withServer { url in
            let editor = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let posted = try await editor.create(title: "Home address of Bob", body: "<p>12 Elm Street</p>")
            _ = try await editor.update(id: posted.id, title: "Home address")
            do throws(ClientError) {
                _ = try await editor.erase(id: posted.id, reason: "personal data")
                Issue.record("an editor erased")
            } catch {
                #expect(error.statusCode == 403, "\(error)")
            }
            let admin = AnnouncementsClient(baseURL: url, token: "root-secret", timeout: testTimeout)
            let erasure = try await admin.erase(id: posted.id, reason: "personal data")
            let auditor = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let lines = try await auditor.eventPage(after: 0, limit: 100).filter { $0.line.contains(#""id":\#(posted.id),"#) }
            #expect(erasure == Erasure(id: posted.id, seq: lines.last?.seq ?? 0, sealedLines: lines.dropLast().map(\.seq)))
            #expect(erasure.sealedLines.count == 2 && !lines.contains { $0.line.contains("Elm") || $0.line.contains("Home") }, "\(lines)")
            do throws(ClientError) {
                _ = try await admin.erase(id: posted.id, reason: "personal data")
                Issue.record("erased twice")
            } catch {
                #expect(error.statusCode == 410, "\(error)")
            }
        }
    }

    @Test("writes: create, replace, update and delete, each answered with the result")
    func writes() async throws {
        try await withServer { url in
            for version in AnnouncementsClient.APIVersion.allCases {
                let client = AnnouncementsClient(baseURL: url, version: version, token: "alice-secret", timeout: testTimeout)
                let created = try await client.create(title: "Fire drill", body: "<p>At 10:00</p>")
                #expect(created.title == "Fire drill")
                #expect(created.body == "<p>At 10:00</p>")
                let replaced = try await client.replace(id: created.id, title: "Fire drill moved", body: nil)
                #expect(replaced == Announcement(id: created.id, title: "Fire drill moved", body: nil, revision: replaced.revision, details: replaced.details))
                #expect((replaced.details != nil) == (version == .v3), "v3 answers with the details, v1 and v2 without")
                #expect(replaced.revision != created.revision)
                let titled = try await client.update(id: created.id, title: "Fire drill at 11:00")
                #expect(titled.body == nil)
                let bodied = try await client.update(id: created.id, body: .set("<p>Bring a coat</p>"))
                #expect(bodied.title == "Fire drill at 11:00")
                #expect(bodied.body == "<p>Bring a coat</p>")
                let cleared = try await client.update(id: created.id, body: .clear, ifMatch: bodied.revision)
                #expect(cleared.body == nil)
                try await client.delete(id: created.id, ifMatch: cleared.revision)
                await #expect(throws: ClientError.status(code: 404, message: "announcement \(created.id) does not exist (it may have been deleted)", fieldErrors: [])) {
                    try await client.announcement(id: created.id)
                }
            }
        }
    }

    @Test("a second read of unchanged data is a 304: the remembered value comes back and no body is sent")
    func conditionalReads() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let first = try await client.summaries()
            let before = client.statistics
            let second = try await client.summaries()
            let after = client.statistics
            #expect(second == first)
            #expect(after.requests == before.requests + 1)
            #expect(after.notModified == before.notModified + 1)
            #expect(after.bytesReceived == before.bytesReceived, "the 304 carried no body")

            let one = try await client.announcement(id: 1)
            let again = try await client.announcement(id: 1)
            #expect(again == one)
            #expect(client.statistics.notModified == after.notModified + 1)

            // A change makes the next read fetch the new data, not the remembered one.
            _ = try await client.update(id: 1, title: "Changed")
            let list = try await client.summaries()
            let changed = try await client.announcement(id: 1)
            #expect(list.items.first?.title == "Changed")
            #expect(changed.title == "Changed")
            #expect(client.statistics.notModified == after.notModified + 1)
        }
    }

    @Test("errors: a stale If-Match is 'changed by someone else', not a plain status")
    func staleRevision() async throws {
        try await withServer { url in
            let alice = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let seen = try await alice.announcement(id: 2)
            _ = try await alice.update(id: 2, title: "Edited elsewhere")
            await #expect {
                try await alice.replace(id: 2, title: "Mine", body: nil, ifMatch: seen.revision)
            } throws: { error in
                guard case .changedBySomeoneElse(let message) = error as? ClientError else { return false }
                return message.contains("fetch it again")
            }
            let current = try await alice.announcement(id: 2)
            #expect(current.title == "Edited elsewhere", "nothing was written")
        }
    }

    @Test("errors: 401 without a valid token, 404, and 422 with the server's field errors")
    func statusErrors() async throws {
        try await withServer { url in
            let anonymous = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            await #expect { try await anonymous.create(title: "x", body: nil) } throws: { error in
                guard case .status(401, let message, _) = error as? ClientError else { return false }
                return message.contains("token")
            }
            let wrong = AnnouncementsClient(baseURL: url, token: "not-the-token", timeout: testTimeout)
            await #expect { try await wrong.delete(id: 1) } throws: { ($0 as? ClientError)?.statusCode == 401 }

            let alice = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            await #expect { try await alice.update(id: 99, title: "x") } throws: { ($0 as? ClientError)?.statusCode == 404 }
            await #expect { try await alice.create(title: "  ", body: nil) } throws: { error in
                guard case .status(422, _, let fields) = error as? ClientError else { return false }
                return fields.map(\.field) == ["title"] && !fields[0].message.isEmpty
            }
        }
    }

    @Test("errors: an unreachable server, with the underlying error")
    func unreachable() async throws {
        // Port 1 on the loopback: nothing listens there, so the connection is refused at once.
        let client = AnnouncementsClient(baseURL: URL(string: "http://127.0.0.1:1")!)
        await #expect { try await client.health() } throws: { error in
            guard case .unreachable(let url, let underlying) = error as? ClientError else { return false }
            return url.port == 1 && underlying.code != .unknown
                && (error as? ClientError)?.description.hasPrefix("cannot reach the server at 127.0.0.1:1") == true
        }
    }

    @Test("a write that times out is sent again with the same Idempotency-Key; the next write gets a new key")
    func retriedWrite() async throws {
        // Each fake's record is one test's own, started afresh (a run may repeat the tests).
        fakeWriteKeys.withLock { $0 = [] }
        try await withFakeServer { url in
            // The fake server answers the first write only once a second one came: the first
            // attempt times out, and the retry gets the answer. (No wait for a writer role here:
            // a write times out after its 3 s, not 14.)
            var configuration = AnnouncementsClient.Configuration(baseURL: url, token: "t", timeout: 3, writeRetries: 5)
            configuration.writeWait = 0
            let client = AnnouncementsClient(configuration: configuration)
            let saved = try await client.create(title: "Saved", body: nil)
            #expect(saved.id == 9)
            let attempts = fakeWriteKeys.withLock { $0 }
            #expect(attempts.count >= 2, "the write was sent again")
            #expect(Set(attempts).count == 1, "with the same key each time")
            #expect(UUID(uuidString: attempts[0]) != nil)
            _ = try await client.create(title: "Saved", body: nil)
            // (On a busy machine the next write may time out and be sent again too: with its own key.)
            let next = fakeWriteKeys.withLock { $0 }.dropFirst(attempts.count)
            #expect(!next.isEmpty)
            #expect(Set(next).count == 1, "the next write keeps one key on its retries")
            #expect(next.first != attempts[0], "a new write gets a new key")
        }
    }

    @Test("a write waits for its answer its timeout and `writeWait` more (11 s: a node may wait 10 s for the writer role before it answers): not sent again at its timeout")
    func writeWaitsForTheWriterRole() async throws {
        fakeReplaceKeys.withLock { $0[1010] = nil }
        #expect(AnnouncementsClient.Configuration(baseURL: URL(fileURLWithPath: "/")).writeWait == 11)
        try await withFakeServer { url in
            // The fake answers after 3 s; the client's own timeout is 1 s, and a write's wait a
            // minute more here, so that a busy machine's delays cannot reach it.
            var configuration = AnnouncementsClient.Configuration(baseURL: url, token: "t", timeout: 1, writeRetries: 2)
            configuration.writeWait = 60
            let client = AnnouncementsClient(configuration: configuration)
            let replaced = try await client.replace(id: 1010, title: "Replaced late", body: nil)
            #expect(replaced.title == "Replaced late")
            #expect(fakeReplaceKeys.withLock { $0[1010]?.count } == 1, "sent once")
        }
    }

    @Test("a write answered 502, 503 or 504 is sent again with the same Idempotency-Key, after the Retry-After it names", arguments: [502, 503, 504])
    func writeRetriedAfterUnavailable(status: Int) async throws {
        fakeReplaceKeys.withLock { $0[status * 10] = nil }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout, writeRetries: 2)
            let started = ContinuousClock.now
            let replaced = try await client.replace(id: status * 10, title: "Replaced", body: nil)
            #expect(replaced.id == status * 10)
            let keys = fakeReplaceKeys.withLock { $0[status * 10] ?? [] }
            #expect(keys.count == 2 && Set(keys).count == 1 && UUID(uuidString: keys[0]) != nil, "\(keys)")
            if status == 503 { #expect(ContinuousClock.now - started >= .seconds(1), "its Retry-After: 1 was waited for") }
        }
    }

    @Test("the token can be replaced (a refreshed token, a user signing out or in): the next requests send it, and the responses kept for the last are forgotten")
    func replacedToken() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            await #expect { try await client.create(title: "Refused", body: nil) } throws: { ($0 as? ClientError)?.statusCode == 401 }
            client.token = "alice-secret"
            let created = try await client.create(title: "Signed in", body: nil)
            #expect(created.title == "Signed in")
            _ = try await client.announcement(id: 1)
            _ = try await client.announcement(id: 1)
            #expect(client.statistics.notModified == 1, "the second read was a 304")
            client.token = nil
            #expect(client.configuration.token == nil)
            _ = try await client.announcement(id: 1)
            #expect(client.statistics.notModified == 1, "read whole again: nothing kept for the last token")
            await #expect { try await client.create(title: "Signed out", body: nil) } throws: { ($0 as? ClientError)?.statusCode == 401 }
        }
    }

    @Test("a timeout goes to URLSession in whole seconds, rounded up, on Linux (whose timer takes whole seconds: 0.5 timed every request out), as it is elsewhere")
    func sessionTimeouts() {
        #if canImport(FoundationNetworking)
        #expect(AnnouncementsClient.sessionInterval(0.5) == 1 && AnnouncementsClient.sessionInterval(2.5) == 3 && AnnouncementsClient.sessionInterval(5) == 5)
        #else
        #expect(AnnouncementsClient.sessionInterval(0.5) == 0.5)
        #endif
    }

    @Test("a write sent again goes with the token it was first sent with, though the app changed the token meanwhile (its key is that writer's)")
    func retryKeepsToken() async throws {
        fakeReplaceKeys.withLock { $0[5033] = nil }
        fakeReplaceTokens.withLock { $0[5033] = nil }
        try await withFakeServer { url in
            // Id 5033: a 503 (Retry-After: 1) first, then the answer.
            // The token changes once the first attempt has reached the server, before it answers.
            let client = AnnouncementsClient(baseURL: url, token: "first-user", timeout: testTimeout, writeRetries: 2)
            fakeReplaceFirstSeen.withLock { $0[5033] = { client.token = "second-user" } }
            _ = try await client.replace(id: 5033, title: "Replaced", body: nil)
            #expect(client.token == "second-user")
            #expect(fakeReplaceTokens.withLock { $0[5033] } == ["Bearer first-user", "Bearer first-user"])
        }
    }

    @Test("an empty token is none: no Authorization is sent (Bearer without a token is a malformed request, a 400)")
    func emptyTokenIsNone() async throws {
        fakeReplaceKeys.withLock { $0[5034] = nil; $0[5035] = nil }
        fakeReplaceTokens.withLock { $0[5034] = nil; $0[5035] = nil }
        try await withFakeServer { url in
            // Ids 5034 and 5035: a 503 (Retry-After: 1) first, then the answer; both attempts recorded.
            _ = try await AnnouncementsClient(baseURL: url, token: "", timeout: testTimeout).replace(id: 5034, title: "Replaced", body: nil)
            _ = try await AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout).replace(id: 5035, title: "Replaced", body: nil)
            #expect(fakeReplaceTokens.withLock { [$0[5034], $0[5035]] } == [["", ""], ["Bearer t", "Bearer t"]])
        }
    }

    @Test("a write goes with the Idempotency-Key the app gives, on every attempt")
    func keyOfTheApp() async throws {
        fakeReplaceKeys.withLock { $0[5032] = nil }
        try await withFakeServer { url in
            // Id 5032: a 503 (Retry-After: 1) first, then the answer.
            let client = AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout, writeRetries: 2)
            _ = try await client.replace(id: 5032, title: "Replaced", body: nil, idempotencyKey: "app-key-5032")
            #expect(fakeReplaceKeys.withLock { $0[5032] } == ["app-key-5032", "app-key-5032"])
        }
    }

    @Test("a read answered 502 (a proxy whose node died) is sent again, and answers")
    func readRetried() async throws {
        fakeReads.withLock { $0 = 0 }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout, writeRetries: 2)
            let read = try await client.announcement(id: 6)
            #expect(read.title == "Read again")
            #expect(fakeReads.withLock { $0 } == 2)
            let once = AnnouncementsClient(baseURL: url, timeout: testTimeout, writeRetries: 0)
            fakeReads.withLock { $0 = 0 }
            await #expect { try await once.announcement(id: 6) } throws: { ($0 as? ClientError)?.statusCode == 502 }
        }
    }

    @Test("sent again after any network failure but a cancellation and those asking again cannot mend; waits grow from 0.5 s to 8 s, less up to half at random")
    func retryPolicy() {
        // Linux reports a connection cut mid-answer (a node that died) as these two.
        for code in [URLError.Code.timedOut, .networkConnectionLost, .badServerResponse, .unknown, .secureConnectionFailed, .cannotConnectToHost] {
            #expect(AnnouncementsClient.isTransient(URLError(code)), "\(code)")
        }
        for code in [URLError.Code.cancelled, .badURL, .serverCertificateUntrusted, .userAuthenticationRequired] {
            #expect(!AnnouncementsClient.isTransient(URLError(code)), "\(code)")
        }
        for _ in 0..<100 {
            #expect((Duration.milliseconds(250)...Duration.milliseconds(500)).contains(AnnouncementsClient.backoff(after: 0)))
            #expect((Duration.milliseconds(500)...Duration.seconds(1)).contains(AnnouncementsClient.backoff(after: 1)))
            #expect((Duration.seconds(4)...Duration.seconds(8)).contains(AnnouncementsClient.backoff(after: 30)))
        }
    }

    @Test("a write cancelled while it waits to be sent again is a cancellation (unreachable, URLError.cancelled), not the answer it waits past")
    func cancelledWhileWaitingToRetry() async throws {
        fakeReplaceKeys.withLock { $0[5039] = nil }
        try await withFakeServer { url in
            // Id 5039: a 503 with Retry-After: 10 first; the task is cancelled during that wait.
            let client = AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout, writeRetries: 2)
            let write = Task { try await client.replace(id: 5039, title: "Replaced", body: nil) }
            for _ in 0..<500 where fakeReplaceKeys.withLock({ $0[5039]?.count ?? 0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(200))
            write.cancel()
            await #expect { try await write.value } throws: { error in
                guard case .unreachable(_, let underlying) = error as? ClientError else { return false }
                return underlying.code == .cancelled
            }
            #expect(fakeReplaceKeys.withLock { $0[5039]?.count } == 1, "not sent again")
        }
    }

    @Test("without retries left, the 503 is the answer, with the server's message, and temporary (a write that may have landed); Retry-After is read in seconds, within a bound")
    func writeNotRetried() async throws {
        fakeReplaceKeys.withLock { $0[5039] = nil }
        try await withFakeServer { url in
            let once = AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout, writeRetries: 0)
            await #expect { try await once.replace(id: 5031, title: "Replaced", body: nil) } throws: { error in
                guard let error = error as? ClientError, case .status(503, let message, _) = error else { return false }
                return message == "the log cannot be written right now" && error.isTemporary
            }
        }
        // What asking again later may mend, and what it cannot.
        let url = try #require(URL(string: "http://127.0.0.1:1"))
        let temporary: [ClientError] = [
            .unreachable(url: url, underlying: URLError(.timedOut)), .unreachable(url: url, underlying: URLError(.networkConnectionLost)),
            .status(code: 429, message: "", fieldErrors: []), .status(code: 502, message: "", fieldErrors: []), .status(code: 504, message: "", fieldErrors: []),
        ]
        let lasting: [ClientError] = [
            .unreachable(url: url, underlying: URLError(.serverCertificateUntrusted)), .unreachable(url: url, underlying: URLError(.cancelled)),
            .status(code: 401, message: "", fieldErrors: []), .status(code: 422, message: "", fieldErrors: []), .status(code: 501, message: "", fieldErrors: []),
            .changedBySomeoneElse(message: ""), .positionBeyondLog(requested: 9, lastSeq: 3), .invalidJSON(detail: ""),
        ]
        #expect(temporary.allSatisfy(\.isTemporary) && !lasting.contains(where: \.isTemporary))
        #expect(AnnouncementsClient.retryAfter("3", atMost: .seconds(10)) == .seconds(3))
        #expect(AnnouncementsClient.retryAfter("3600", atMost: .seconds(10)) == .seconds(10))
        #expect(AnnouncementsClient.retryAfter("120", atMost: EventStreamParser.longestRetry) == .seconds(120), "the feed waits as long as a server asks, up to five minutes")
        #expect(AnnouncementsClient.retryAfter("Wed, 21 Oct 2026 07:28:00 GMT", atMost: .seconds(10)) == nil)
    }

    @Test("the response cache keeps at most its byte budget, oldest out first, and no body over a quarter of it")
    func cacheBudget() {
        let cache = ResponseCache(budget: 1000)
        func response(_ bytes: Int) -> AnnouncementsClient.Received { .init(data: Data(count: bytes), headers: [:]) }
        for number in 0..<5 { cache.remember(response(200), etag: "\"\(number)\"", for: "k\(number)") }
        #expect(cache.keptBytes == 1000)
        cache.remember(response(200), etag: "\"5\"", for: "k5")
        #expect(cache.keptBytes == 1000 && cache.entry(for: "k0") == nil && cache.entry(for: "k5") != nil, "the oldest went")
        cache.remember(response(100), etag: "\"1b\"", for: "k1")
        #expect(cache.keptBytes == 900 && cache.entry(for: "k1")?.etag == "\"1b\"", "a key kept again counts once")
        cache.remember(response(251), etag: "\"big\"", for: "k2")
        #expect(cache.entry(for: "k2") == nil && cache.keptBytes == 700, "too large to keep, and the older answer for it is gone too")
    }

    @Test("a delete answered with anything but the API's 204 (a captive portal's 200 page) is an error, not a success; a 204 without Log-Seq (an older server's) is one")
    func deleteAnsweredBySomeoneElse() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "t", timeout: testTimeout)
            await #expect { try await client.delete(id: 8) } throws: { error in
                guard case .unexpectedJSON(_, let detail)? = error as? ClientError else { return false }
                return detail.contains("(200, Content-Type: text/html)") && detail.contains("a delete is answered 204;")
            }
            // A server before 1.20.0 answers 204 without Log-Seq: a delete all the same.
            try await AnnouncementsClient(baseURL: url.appendingPathComponent("older"), token: "t", timeout: testTimeout).delete(id: 8)
        }
    }

    @Test("a redirect is not followed (it would take the token elsewhere, and drop or change a write): the caller gets its status and where it points", arguments: [301, 302, 307, 308])
    func redirectRefused(status: Int) async throws {
        try await withRedirectingServer(status: .init(code: status)) { url in
            let client = AnnouncementsClient(baseURL: url, token: "secret-token", timeout: testTimeout, writeRetries: 0)
            // Where it points, resolved, and the address that serves the same path there.
            let root = url.absoluteString.hasSuffix("/") ? String(url.absoluteString.dropLast()) : url.absoluteString
            func isRedirect(_ error: any Error, to path: String) -> Bool {
                guard case .status(let code, let message, _)? = error as? ClientError else { return false }
                return code == status && message.contains("redirects to \(root)/elsewhere\(path);")
                    && message.hasSuffix("use \(root)/elsewhere as the server's address")
            }
            await #expect { try await client.announcement(id: 1) } throws: { isRedirect($0, to: "/announcements/1") }
            await #expect { try await client.create(title: "Moved", body: "<p>x</p>") } throws: { isRedirect($0, to: "/announcements") }
            for pollInterval in [nil, Duration.seconds(1)] {
                var feed = client.events(after: 0, retryDelay: .milliseconds(100), pollInterval: pollInterval).makeAsyncIterator()
                await #expect { try await feed.next() } throws: { isRedirect($0, to: "/events") }
            }
            #expect(fakeRedirectsFollowed.withLock { $0 } == [], "nothing, and no token, went where the redirects point")
        }
    }

    @Test("the feed's reconnection waits double while attempts fail, at most a minute, never below a Retry-After (spread over a quarter more), and start again once a connection brings events or stays open")
    func reconnectionBackoff() {
        var reconnection = Reconnection(delay: .seconds(1))
        var waits: [Duration] = []
        for _ in 0..<10 { waits.append(reconnection.next()) }
        for (index, wait) in waits.enumerated() {
            let full = min(Duration.seconds(1) * (1 << index), Reconnection.longest)
            #expect(wait <= full && wait >= full / 2, "wait \(index): \(wait)")
        }
        let asked = reconnection.next(atLeast: .seconds(200))
        #expect(asked >= .seconds(200) && asked <= .seconds(250), "a server's Retry-After is kept, and up to a quarter more: \(asked)")
        // Clients a server answered together come back spread over that quarter, not in step.
        let spread = (0..<100).map { _ -> Duration in
            var first = Reconnection(delay: .milliseconds(100))
            return first.next(atLeast: .seconds(4))
        }
        #expect(spread.allSatisfy { $0 >= .seconds(4) && $0 <= .seconds(5) }, "\(spread)")
        #expect(spread.max()! - spread.min()! > .milliseconds(500), "\(spread)")
        reconnection.received()
        reconnection.worked()
        #expect(reconnection.next() <= .seconds(1), "a connection that brought events starts the waits again")

        // A stream that opens and ends at once (a server in trouble) is a failure: the waits go on
        // doubling. One that stayed open `steady` (an idle stream a proxy cut) worked.
        var troubled = Reconnection(delay: .seconds(1))
        for _ in 0..<3 {
            troubled.received()
            _ = troubled.next()
        }
        troubled.received()
        #expect(troubled.next() >= .seconds(4), "still doubling after streams that opened and brought nothing")
        let opened = ContinuousClock.now
        troubled.received(at: opened)
        #expect(troubled.next(now: opened + Reconnection.steady) <= .seconds(1), "a stream open that long worked")

        // A feed that opened once keeps counting as one that did, through any number of failed
        // connections after (two pages cut off in a row, on Linux two unknown errors, still pass).
        var openedOnce = Reconnection(delay: .seconds(1))
        #expect(!openedOnce.hasOpened)
        openedOnce.received()
        for _ in 0..<3 { _ = openedOnce.next() }
        #expect(openedOnce.hasOpened)

        // A delay of zero (`retry: 0` from a server) still waits, and still backs off.
        var eager = Reconnection(delay: .zero)
        let first = eager.next(), second = eager.next()
        #expect(first >= Reconnection.shortest / 2 && first <= Reconnection.shortest, "\(first)")
        #expect(second >= Reconnection.shortest && second <= Reconnection.shortest * 2, "\(second)")
    }

    @Test("the feed asks again after passing failures only: an unknown error (Linux's word for a cut stream, and for a certificate it does not trust) only after a stream opened")
    func passingFailures() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1"))
        func unreachable(_ code: URLError.Code) -> ClientError { .unreachable(url: url, underlying: URLError(code)) }
        #expect(AnnouncementsClient.isPassing(unreachable(.cannotConnectToHost), afterAStream: false))
        #expect(AnnouncementsClient.isPassing(unreachable(.networkConnectionLost), afterAStream: false))
        #expect(AnnouncementsClient.isPassing(unreachable(.unknown), afterAStream: true))
        #expect(!AnnouncementsClient.isPassing(unreachable(.unknown), afterAStream: false))
        #expect(!AnnouncementsClient.isPassing(unreachable(.serverCertificateUntrusted), afterAStream: true))
        #expect(AnnouncementsClient.isPassing(.status(code: 503, message: "busy", fieldErrors: []), afterAStream: false))
        #expect(!AnnouncementsClient.isPassing(.status(code: 401, message: "no", fieldErrors: []), afterAStream: true))
    }

    @Test("events(after:) reconnects after a stream cut off mid-way (a node killed), resuming after the last event")
    func feedCutOff() async throws {
        fakeAbruptResumes.withLock { $0 = [] }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("abrupt"), timeout: testTimeout)
            var seen: [Int] = []
            for try await event in client.events(after: 0, retryDelay: .milliseconds(10), pollInterval: nil) {
                seen.append(event.seq)
                if seen.count == 3 { break }
            }
            #expect(seen == [1, 2, 3])
            #expect(fakeAbruptResumes.withLock { $0 }.prefix(3) == [0, 1, 2], "each reconnection names the last event it got")
        }
    }

    @Test("the feed ends with badEventStream when a 200 is not an event stream (a captive portal), instead of reconnecting for ever")
    func feedNotAStream() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("portal"), timeout: testTimeout)
            await #expect { for try await _ in client.events(pollInterval: nil) {} } throws: { error in
                guard case .badEventStream(let detail) = error as? ClientError else { return false }
                return detail.contains("Content-Type text/html, not text/event-stream")
            }
        }
    }

    @Test("events(after:) follows the feed, as a stream or in pages: stored events, then new ones as they are written", arguments: [nil, Duration.milliseconds(50)])
    func followsTheFeed(pollInterval: Duration?) async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let auditor = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let seen = try await withThrowingTaskGroup(of: [FeedEvent].self) { group in
                group.addTask {
                    var seen: [FeedEvent] = []
                    for try await event in auditor.events(after: 1, pollInterval: pollInterval) {
                        seen.append(event)
                        if seen.count == 2 { _ = try await client.create(title: "Live", body: nil) }
                        if seen.count == 3 { break }
                    }
                    return seen
                }
                group.addTask {
                    // A bound on a feed that never delivers (a busy machine running every suite
                    // at once has taken over 20 s for these few events).
                    try await Task.sleep(for: .seconds(90))
                    throw CancellationError()
                }
                let seen = try await group.next() ?? []
                group.cancelAll()
                return seen
            }
            #expect(seen.map(\.seq) == [2, 3, 4])
            #expect(seen.map(\.type) == ["created", "created", "created"])
            #expect(seen.last?.line.hasPrefix(#"{"seq":4,"type":"created","id":4,"#) == true)
            #expect(seen.last?.line.contains(#""by":"alice""#) == true, "an auditor follows the full lines")
        }
    }

    @Test("in pages: each event once, Min-Seq from the second page on, a 503 asked again; a 409 for the position ends it as positionBeyondLog", .timeLimit(.minutes(3)))
    func feedInPages() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("paged"), timeout: testTimeout)
            var seqs: [Int] = []
            for try await event in client.events(after: 0, retryDelay: .milliseconds(10), pollInterval: .milliseconds(10)) {
                seqs.append(event.seq)
                if seqs.count == 3 { break }
            }
            #expect(seqs == [1, 2, 3], "nothing missed, nothing repeated")
            #expect(fakePages.withLock { Array($0.filter { $0.hasPrefix("paged ") }.prefix(3)) } == ["paged 0 -", "paged 2 2", "paged 2 2"], "the page after the 503 is asked again, with Min-Seq")
            let beyond = AnnouncementsClient(baseURL: url.appendingPathComponent("beyondpages"), timeout: testTimeout)
            await #expect(throws: ClientError.positionBeyondLog(requested: 5, lastSeq: 1)) {
                for try await _ in beyond.events(after: 5, retryDelay: .milliseconds(10), pollInterval: .milliseconds(10)) {}
            }
            // The loop throws `ClientError` itself: its cases are caught by name, as docs/client.md does.
            var caught: (requested: Int, lastSeq: Int)?
            do throws(ClientError) {
                for try await _ in beyond.events(after: 5, retryDelay: .milliseconds(10), pollInterval: .milliseconds(10)) {}
            } catch .positionBeyondLog(let requested, let lastSeq) {
                caught = (requested, lastSeq)
            } catch {
                Issue.record("another error: \(error)")
            }
            #expect(caught?.requested == 5 && caught?.lastSeq == 1)
            #if canImport(FoundationNetworking)
            // On Linux, by default: these JSON pages are read (a stream would refuse them as not
            // an event stream). URLSession there busy-polls an open stream.
            var first: FeedEvent?
            for try await event in client.events(after: 0) {
                first = event
                break
            }
            #expect(first?.seq == 1)
            #expect(AnnouncementsClient.defaultPollInterval == .seconds(1))
            #else
            #expect(AnnouncementsClient.defaultPollInterval == nil, "elsewhere the feed streams by default")
            #endif
        }
    }

    @Test("a read the server may hold before it answers waits longer than the client's timeout: a search 11 s more (the server holds one up to 10 s for its search index), one with Min-Seq 6 s more (it waits 5 s), one with both 17 s more; any other, the timeout")
    func heldReadsWaitLonger() {
        #expect(AnnouncementsClient.heldWait(minSeq: false, searching: true) == 11)
        #expect(AnnouncementsClient.heldWait(minSeq: true, searching: false) == 6)
        #expect(AnnouncementsClient.heldWait(minSeq: true, searching: true) == 17)
        #expect(AnnouncementsClient.heldWait(minSeq: false, searching: false) == nil)
    }

    @Test("eventPage(after:) sends a position above 0 as Min-Seq (a node behind waits for it, not a restored log) and asks again after a 503; a 409 for it is positionBeyondLog")
    func eventPageSendsMinSeq() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("onepage"), timeout: testTimeout)
            let first = try await client.eventPage(after: 0)
            #expect(first.map(\.seq) == [1, 2])
            let second = try await client.eventPage(after: 2)
            #expect(second.map(\.seq) == [3])
            #expect(fakePages.withLock { $0.filter { $0.hasPrefix("onepage ") } } == ["onepage 0 -", "onepage 2 2", "onepage 2 2"], "Min-Seq from a position above 0, the 503 asked again")
            let beyond = AnnouncementsClient(baseURL: url.appendingPathComponent("beyondpages"), timeout: testTimeout)
            await #expect(throws: ClientError.positionBeyondLog(requested: 5, lastSeq: 1)) { try await beyond.eventPage(after: 5) }
        }
    }

    @Test("events(after:) reconnects when the stream ends, resuming after the last event with Last-Event-ID")
    func feedReconnects() async throws {
        fakeFeedResumes.withLock { $0 = [] }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            var seqs: [Int] = []
            for try await event in client.events(after: 4, retryDelay: .milliseconds(20), pollInterval: nil) {
                seqs.append(event.seq)
                if seqs.count == 3 { break }
            }
            #expect(seqs == [5, 6, 7], "nothing missed, nothing repeated")
            #expect(fakeFeedResumes.withLock { Array($0.prefix(3)) } == [4, 5, 6])
        }
    }

    @Test("events(after:) waits longer after each stream that opens and ends without an event (a server in trouble), not the first delay each time", .timeLimit(.minutes(2)))
    func troubledStreamBacksOff() async throws {
        fakeTroubledConnections.withLock { $0 = [] }
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url.appendingPathComponent("troubled"), timeout: testTimeout)
            let feed = Task {
                for try await _ in client.events(after: 0, retryDelay: .milliseconds(100), pollInterval: nil) {}
            }
            defer { feed.cancel() }
            let deadline = ContinuousClock.now + .seconds(60)
            while fakeTroubledConnections.withLock({ $0.count }) < 6, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            let came = fakeTroubledConnections.withLock { $0 }
            try #require(came.count >= 6, "\(came.count) connections in a minute")
            // A connection comes at least the client's wait after the one before it ended (later
            // on a busy machine, never sooner): each wait at least half of 0.1 s doubled per
            // failure (the random part takes off at most half). At the first delay each time,
            // the fifth would come about 0.1 s after the fourth, not 0.8 s.
            for index in 1..<6 {
                let least = Duration.milliseconds(50) * (1 << (index - 1))
                #expect(came[index] - came[index - 1] >= least, "wait \(index): \(came[index] - came[index - 1]), at least \(least)")
            }
        }
    }

    @Test("eventPage(after:limit:) reads a page of the feed, each line exactly as stored for an auditor, in its public form for anyone else")
    func eventPage() async throws {
        try await withServer { url in
            let anyone = try await AnnouncementsClient(baseURL: url, timeout: testTimeout).eventPage(after: 1, limit: 5)
            #expect(anyone.map(\.seq) == [2, 3])
            #expect(anyone.map(\.type) == ["created", "created"])
            #expect(anyone[0].line.hasPrefix(#"{"seq":2,"type":"created","id":2,"at":""#) && anyone[0].line.hasSuffix(#"Z"}"#))
            #expect(!anyone.contains { $0.line.contains("Announcement") || $0.line.contains("seed") })
            let client = AnnouncementsClient(baseURL: url, token: "audrey-secret", timeout: testTimeout)
            let page = try await client.eventPage(after: 1, limit: 5)
            #expect(page.map(\.seq) == [2, 3])
            #expect(page.map(\.type) == ["created", "created"])
            #expect(page[0].line.hasPrefix(#"{"seq":2,"type":"created","id":2,"at":""#))
            #expect(page[1].line.hasPrefix(#"{"seq":3,"#) && page[1].line.contains(#""data":{"title":"Announcement 3","body":"<p>Body 3</p>"},"salt":""#) && page[1].line.contains(#","v":3,"prev":""#))
            #expect(try await client.eventPage(after: 0, limit: 1).map(\.seq) == [1])
            #expect(try await client.eventPage(after: 3).isEmpty, "at the end of the log: nothing yet")
        }
    }

    @Test("a feed position beyond the server's log is positionBeyondLog, from a page and from the stream or pages, which do not reconnect", arguments: [nil, Duration.milliseconds(50)])
    func positionBeyondLog(pollInterval: Duration?) async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            await #expect(throws: ClientError.positionBeyondLog(requested: 14, lastSeq: 3)) { try await client.eventPage(after: 14) }
            let outcome = try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask {
                    do {
                        for try await event in client.events(after: 14, retryDelay: .milliseconds(10), pollInterval: pollInterval) { return "event \(event.seq)" }
                        return "the stream ended without an error"
                    } catch {
                        return "\(error)"
                    }
                }
                group.addTask {
                    // Bounded: a stream that reconnected on a 409 would go on until cancelled.
                    try await Task.sleep(for: .seconds(60))
                    return "still going after 60 seconds"
                }
                let first = try await group.next() ?? ""
                group.cancelAll()
                return first
            }
            #expect(outcome == ClientError.positionBeyondLog(requested: 14, lastSeq: 3).description)
            #expect(outcome.hasPrefix("the server's log ends at seq 3, before the events after 14"))
        }
    }

    @Test("the event-stream parser reads blocks split anywhere, and skips heartbeats")
    func eventStreamParser() throws {
        var parser = EventStreamParser()
        let text = ": following the log after 0\n\nid: 1\nevent: created\ndata: {\"seq\":1}\n\n: heartbeat\n\nid: 2\nevent: deleted\ndata: {\"seq\":2}\n\n"
        var events: [FeedEvent] = []
        for byte in Data(text.utf8) { events += try parser.feed(Data([byte])) }
        let expected = [FeedEvent(seq: 1, type: "created", line: #"{"seq":1}"#), FeedEvent(seq: 2, type: "deleted", line: #"{"seq":2}"#)]
        #expect(events == expected)
        var whole = EventStreamParser()
        #expect(try whole.feed(Data(text.utf8)) == expected, "all at once")
        var halves = EventStreamParser()
        let bytes = Data(text.utf8), middle = bytes.count / 2 + 1
        #expect(try halves.feed(bytes[..<middle]) + halves.feed(bytes[middle...]) == expected, "in two chunks")
    }

    @Test("the event-stream parser drops one byte order mark at the stream's start (split between chunks too), and only there")
    func eventStreamByteOrderMark() throws {
        let bytes = Data([0xEF, 0xBB, 0xBF]) + Data("id: 1\ndata: x\n\n".utf8)
        let expected = [FeedEvent(seq: 1, type: "message", line: "x")]
        for split in 0...bytes.count {
            var parser = EventStreamParser()
            #expect(try parser.feed(bytes[..<split]) + parser.feed(bytes[split...]) == expected, "split at \(split)")
        }
        // A mark anywhere else is part of its line: here of a field's name, so an unknown field.
        var later = EventStreamParser()
        #expect(try later.feed(Data("id: 1\ndata: x\n\n".utf8) + Data([0xEF, 0xBB, 0xBF]) + Data("id: 2\ndata: y\n\n".utf8)) == expected)
        // Bytes that begin like a mark and are not one stay the line's.
        var almost = EventStreamParser()
        #expect(try almost.feed(Data([0xEF, 0xBB]) + Data(": comment\nid: 1\ndata: x\n\n".utf8)) == expected)
    }

    @Test("the event-stream parser takes CR, LF and CRLF line ends (a CRLF split between chunks too), joins data lines, and reads retry:", arguments: ["\n", "\r", "\r\n"])
    func eventStreamLineEnds(end: String) throws {
        let text = ["retry: 2500", "id:7", "event:edited", "data: first", "data:second", "unknown: ignored", "data", "", ": heartbeat", "", "id: 8", "data: {}", "", ""].joined(separator: end)
        let expected = [FeedEvent(seq: 7, type: "edited", line: "first\nsecond\n"), FeedEvent(seq: 8, type: "message", line: "{}")]
        var whole = EventStreamParser()
        #expect(try whole.feed(Data(text.utf8)) == expected)
        #expect(whole.retry == .milliseconds(2500))
        // Every split, a CR and its LF in different chunks among them.
        let bytes = Data(text.utf8)
        for split in 1..<bytes.count {
            var parser = EventStreamParser()
            #expect(try parser.feed(bytes[..<split]) + parser.feed(Data()) + parser.feed(bytes[split...]) == expected, "split at \(split), an empty chunk between")
        }
        var bad = EventStreamParser()
        _ = try bad.feed(Data("retry: soon\nretry: -1\n\n".utf8))
        #expect(bad.retry == nil, "a retry that is not digits is ignored")
    }

    @Test("an event whose id is not a seq in digits (-1, +5, a space, a NUL, a word) is not delivered: a seq is what the feed resumes from")
    func eventStreamIDs() throws {
        for id in ["-1", "+5", " 5", "5\u{0}", "five", "99999999999999999999"] {
            var parser = EventStreamParser()
            #expect(try parser.feed(Data("id: \(id)\ndata: {}\n\n".utf8)).isEmpty, "id: \(id)")
        }
        var parser = EventStreamParser()
        #expect(try parser.feed(Data("id: 0042\ndata: {}\n\n".utf8)) == [FeedEvent(seq: 42, type: "message", line: "{}")])
    }

    @Test("an event that never ends is refused once past the limit, however it is split; one within it is read")
    func eventStreamLimit() throws {
        var parser = EventStreamParser(maxEventBytes: 1000)
        #expect(try parser.feed(Data(("id: 1\ndata: " + String(repeating: "a", count: 900) + "\n\n").utf8)).count == 1)
        _ = try parser.feed(Data("id: 2\ndata: ".utf8))
        #expect(throws: ClientError.self) {
            for _ in 0..<200 { _ = try parser.feed(Data(String(repeating: "b", count: 10).utf8)) }
        }
        var lines = EventStreamParser(maxEventBytes: 1000)
        #expect(throws: ClientError.badEventStream(detail: "an event grew past 1000 bytes without the blank line that ends it")) {
            for _ in 0..<200 { _ = try lines.feed(Data("data: xxxxxxxx\n".utf8)) }
        }
    }

    @Test("errors: an answer that is not JSON, and JSON that lacks or mistypes a field, are told apart")
    func badAnswers() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            await #expect { try await client.announcement(id: 1) } throws: { error in
                // It names what answered: the URL, the status and the Content-Type.
                guard case .invalidJSON(let detail) = error as? ClientError else { return false }
                return detail.hasPrefix("the answer to \(url.absoluteString)/announcements/1 (200, Content-Type: application/json): ")
            }
            await #expect(throws: ClientError.unexpectedJSON(field: "id", detail: "missing")) {
                try await client.announcement(id: 2)
            }
            await #expect(throws: ClientError.unexpectedJSON(field: "id", detail: "expected a whole number")) {
                try await client.announcement(id: 3)
            }
            // The answer as a whole of another shape (an object for a list) is said in words.
            do {
                _ = try JSONDecoder().decode([Int].self, from: Data("{}".utf8))
                Issue.record("an object decoded as a list")
            } catch let error as DecodingError {
                let client = ClientError(decoding: error)
                #expect(client == .unexpectedJSON(field: "", detail: "expected a list"))
                #expect(client.description == "the server's answer is not what this API answers: expected a list")
            }
            // An error whose body has no API message (no route there: the framework's own 404) says so.
            await #expect { try await client.announcement(id: 999) } throws: { error in
                guard case .status(404, let message, _) = error as? ClientError else { return false }
                return message.hasSuffix(ClientError.foreignAnswer)
            }
        }
    }
}

@Suite struct ReadmeExampleTests {
    /// docs/client.md's example, as written there, against a live server.
    @Test("docs/client.md's example compiles and runs: a stale edit is caught as changedBySomeoneElse")
    func readmeExample() async throws {
        try await withServer { url in
            let client = AnnouncementsClient(baseURL: url, version: .v2, token: "alice-secret", timeout: 5)
            let page = try await client.summaries(max: 20)
            let detail = try await client.announcement(id: page.items[0].id)
            _ = try await client.update(id: detail.id, title: "Edited in between")
            var outcome = ""
            let key = UUID().uuidString
            do throws(ClientError) {
                let edited = try await client.update(id: detail.id, title: "New title", ifMatch: detail.revision, idempotencyKey: key)
                outcome = edited.revision ?? ""
            } catch .changedBySomeoneElse {
                outcome = "changed by someone else"
            } catch .status(let code, _, _) where [429, 500, 502, 503, 504].contains(code) {
                outcome = "retry later"
            } catch .status(let code, let message, _) {
                outcome = "\(code) \(message)"
            } catch .unreachable(_, let underlying) {
                outcome = "\(underlying)"
            } catch .invalidJSON, .unexpectedJSON, .badEventStream {
                outcome = "not this API"
            } catch .positionBeyondLog {
                outcome = "only the event feed throws this"
            }
            #expect(outcome == "changed by someone else")
        }
    }
}
