@testable import AnnouncementsDomain
@testable import AnnouncementsStore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// The log's lines, exactly as stored.
func storedLines(_ store: EventStore) throws -> [String] {
    try String(contentsOfFile: store.path, encoding: .utf8).split(separator: "\n").map(String.init)
}

@Suite struct AuditAPITests {
    /// Announcement 2 edited by alice, then deleted by bob: seqs 7 and 8.
    private func editAndDelete(_ client: any TestClientProtocol) async throws {
        try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"title":"Renamed"}"#)) { #expect($0.status == .ok) }
        let bob: HTTPFields = [.authorization: "Bearer bob-secret"]
        try await client.execute(uri: "/announcements/2", method: .delete, headers: bob) { #expect($0.status == .noContent) }
    }

    @Test("GET /announcements/{id}/history: every event of the announcement as stored, oldest first, deleted ones too")
    func history() async throws {
        try await withServer { client, store in
            try await editAndDelete(client)
            let stored = try storedLines(store)
            for path in ["/announcements/2/history", "/v1/announcements/2/history"] {
                try await client.execute(uri: path, method: .get, headers: auditor) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                    #expect(response.objects.map { $0["type"] as? String } == ["created", "edited", "deleted"])
                    #expect(response.objects.map { $0["by"] as? String } == ["seed", "alice", "bob"])
                    #expect(String(buffer: response.body) == "[" + [stored[1], stored[6], stored[7]].joined(separator: ",") + "]")
                }
            }
            try await client.execute(uri: "/announcements/99/history", method: .get, headers: auditor) { response in
                #expect(response.status == .notFound)
                #expect(response.object["message"] as? String == "announcement 99 was never created")
            }
            // The ETag names the last event: unchanged history is a 304, a new event makes it a 200.
            var tag: String?
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: auditor) { tag = $0.headers[.eTag] }
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: [.authorization: "Bearer audrey-secret", .ifNoneMatch: tag ?? ""]) { response in
                #expect(tag != nil && response.status == .notModified)
                #expect(response.body.readableBytes == 0)
            }
            try await client.execute(uri: "/announcements/1", method: .patch, headers: alice, body: ByteBuffer(string: #"{"title":"Again"}"#)) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements/1/history", method: .get, headers: [.authorization: "Bearer audrey-secret", .ifNoneMatch: tag ?? ""]) { response in
                #expect(response.status == .ok)
                #expect(response.objects.last?["title"] == nil && (response.objects.last?["data"] as? [String: Any])?["title"] as? String == "Again")
            }
        }
    }

    @Test("GET /announcements/{id}?asOf= gives the announcement as it was, counting events at exactly that point")
    func asOf() async throws {
        try await withServer { client, store in
            try await editAndDelete(client)
            for (asOf, title) in [("6", "Grails Quickcast #2: JSON Views"), ("7", "Renamed")] {
                try await client.execute(uri: "/announcements/2?asOf=\(asOf)", method: .get, headers: [.authorization: "Bearer audrey-secret", acceptVersion: "1.0"]) { response in
                    #expect(response.status == .ok)
                    #expect(response.object["title"] as? String == title)
                    let revision = asOf == "6" ? 2 : 7
                    #expect(response.headers[.eTag] == "\"2-\(revision)-\(store.lineTag(of: revision))\"")
                }
            }
            // A time counts the events at exactly that time.
            let editedAt = try #require(try await store.history(id: 2)?[1].event.at)
            try await client.execute(uri: "/announcements/2?asOf=\(editedAt.description)", method: .get, headers: auditor) { response in
                #expect(response.object["title"] as? String == "Renamed")
            }
            for asOf in ["8", "0"] {
                try await client.execute(uri: "/announcements/2?asOf=\(asOf)", method: .get, headers: auditor) { response in
                    #expect(response.status == .notFound)
                    #expect((response.object["message"] as? String)?.hasPrefix("announcement 2 did not exist at \(asOf)") == true)
                }
            }
            try await client.execute(uri: "/announcements/99?asOf=3", method: .get, headers: auditor) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/announcements/2?asOf=yesterday", method: .get, headers: auditor) { response in
                #expect(response.status == .badRequest)
                #expect((response.object["message"] as? String)?.contains("`asOf`") == true)
            }
        }
    }

    @Test("GET /announcements?asOf= gives the list as it was, in both versions, paged and sorted; the present point is the live list, byte for byte")
    func listAsOf() async throws {
        try await withServer { client, store in
            try await editAndDelete(client)
            func list(_ query: String, _ headers: HTTPFields = auditor) async throws -> TestResponse {
                try await client.execute(uri: "/announcements?\(query)", method: .get, headers: headers)
            }
            func titles(_ response: TestResponse) -> [String] { response.objects.compactMap { $0["title"] as? String } }

            let before = try await list("asOf=6&max=100", [.authorization: "Bearer audrey-secret", acceptVersion: "1.0"])
            #expect(before.status == .ok && before.headers[.totalCount] == "6")
            #expect(before.objects.map { $0["id"] as? Int } == [1, 2, 3, 4, 5, 6])
            #expect(titles(before)[1] == "Grails Quickcast #2: JSON Views")
            #expect(before.objects.allSatisfy { $0.keys.contains("body") }, "v1: with bodies")
            let edited = try await list("asOf=7&max=100")
            #expect(titles(edited)[1] == "Renamed" && edited.headers[.totalCount] == "6")
            // A time counts the events at exactly that time, as a seq does.
            let editedAt = try #require(try await store.history(id: 2)?[1].event.at)
            #expect(String(buffer: try await list("asOf=\(editedAt)&max=100").body) == String(buffer: edited.body))
            #expect(try await list("asOf=0").objects.isEmpty)

            // At the log's last seq (or beyond it), the past is the present: the same bytes as the live list.
            for (query, headers) in [("", auditor), ("sort=title&order=desc&max=3&offset=1", auditor), ("", [.authorization: "Bearer audrey-secret", acceptVersion: "2.0"])] as [(String, HTTPFields)] {
                let live = try await list(query, headers)
                for point in ["8", "99"] {
                    let past = try await list("asOf=\(point)" + (query.isEmpty ? "" : "&" + query), headers)
                    #expect(past.status == .ok && String(buffer: past.body) == String(buffer: live.body), "\(query)")
                    #expect(past.headers[.totalCount] == live.headers[.totalCount])
                }
            }

            // v2, sorted and paged, with links that keep the point.
            let page = try await list("asOf=7&max=2&offset=2&sort=title&order=desc", [.authorization: "Bearer audrey-secret", acceptVersion: "2.0"])
            let expected = titles(edited).sorted(by: >)[2..<4]
            #expect(titles(page) == Array(expected))
            #expect(page.objects.allSatisfy { !$0.keys.contains("body") }, "v2: summaries")
            #expect(page.headers[.totalCount] == "6")
            #expect(page.headers[.link] == "</announcements?offset=4&max=2&sort=title&order=desc&asOf=7>; rel=\"next\", </announcements?offset=0&max=2&sort=title&order=desc&asOf=7>; rel=\"prev\"")
            // The link of a time point carries the time as the log writes it.
            let timed = try await list("asOf=\(editedAt)&max=2")
            #expect(timed.headers[.link]?.contains("&asOf=\(editedAt)>; rel=\"next\"") == true, "\(timed.headers[.link] ?? "")")

            // An ETag that a 304 honours.
            let tag = try #require(edited.headers[.eTag])
            #expect(try await list("asOf=7&max=100", [.authorization: "Bearer audrey-secret", .ifNoneMatch: tag]).status == .notModified)
            #expect(try await list("asOf=6&max=100", [.authorization: "Bearer audrey-secret", .ifNoneMatch: tag]).status == .ok)

            // A point past the log's end is the present: a new event makes it another state.
            let present = try #require(try await list("asOf=99&max=100").headers[.eTag])
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"Later"}"#)) { #expect($0.status == .created) }
            let later = try await list("asOf=99&max=100", [.authorization: "Bearer audrey-secret", .ifNoneMatch: present])
            #expect(later.status == .ok && titles(later).last == "Later")
            #expect(try await list("asOf=7&max=100", [.authorization: "Bearer audrey-secret", .ifNoneMatch: tag]).status == .notModified, "the past up to 7 is as it was")

            // A time with an offset is the same point; its links carry it in UTC, as the log writes it.
            let plusOne = Timestamp(millisecondsSince1970: editedAt.millisecondsSince1970 + 3_600_000).description
                .replacingOccurrences(of: "Z", with: "+01:00").replacingOccurrences(of: "+", with: "%2B")
            let shifted = try await list("asOf=\(plusOne)&max=2")
            #expect(String(buffer: shifted.body) == String(buffer: timed.body))
            #expect(shifted.headers[.link] == timed.headers[.link])
            // A time that cannot be written back in the log's form (year -1 in UTC) is refused.
            #expect(try await list("asOf=0000-01-01T00:00:00%2B00:01&max=2").status == .badRequest)

            // XML, and the errors of the item's asOf.
            let xml = try await list("asOf=6", [.authorization: "Bearer audrey-secret", .accept: "application/xml"])
            #expect(xml.status == .ok && String(buffer: xml.body).contains("<title>Grails Quickcast #2: JSON Views</title>"))
            #expect(try await list("asOf=yesterday").status == .badRequest)
            #expect(try await list("asOf=6", alice).status == .forbidden)
            #expect(try await list("asOf=6", [:]).status == .unauthorized)
        }
    }

    @Test("GET /events: stored events after a seq, oldest first, exactly as stored, with the log's last seq; limit defaults to 100 and stops at 1000")
    func feed() async throws {
        try await withServer { client, store in
            try await editAndDelete(client)
            let stored = try storedLines(store)
            try await client.execute(uri: "/events", method: .get, headers: auditor) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "[" + stored.joined(separator: ",") + "]")
                // A shared cache must tell a page from a stream, and one resumed elsewhere.
                #expect(response.headers[.vary] == "Accept, Accept-Encoding, Authorization, Last-Event-ID")
                // Sealed by an erasure, or grown, a page changes, and has no validator: no cache keeps it.
                #expect(response.headers[.cacheControl] == "no-store")
            }
            try await client.execute(uri: "/events?after=2&limit=2", method: .get, headers: auditor) { response in
                #expect(String(buffer: response.body) == "[" + stored[2...3].joined(separator: ",") + "]")
                // Where the log ends: this page (up to seq 4) has not reached it.
                #expect(response.headers[HTTPField.Name("Log-Seq")!] == "8")
            }
            try await client.execute(uri: "/events?after=8", method: .get, headers: auditor) { #expect(String(buffer: $0.body) == "[]") }
            // Found by schemathesis: numbers near Int.max must not overflow.
            try await client.execute(uri: "/events?after=\(Int.max - 1)&limit=\(Int.max)", method: .get, headers: auditor) { response in
                #expect(response.status == .conflict)
                #expect(response.object["lastSeq"] as? Int == 8)
            }
            try await client.execute(uri: "/events?after=0&limit=\(Int.max)", method: .get, headers: auditor) { #expect($0.objects.count == 8) }
            try await client.execute(uri: "/announcements?offset=\(Int.max)&max=100", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.link]?.contains("rel=\"prev\"") == true)
            }
            for query in ["after=-1", "after=x", "limit=0"] {
                try await client.execute(uri: "/events?\(query)", method: .get, headers: auditor) { #expect($0.status == .badRequest) }
            }
            try await client.execute(uri: "/events", method: .get, headers: [.authorization: "Bearer audrey-secret", .accept: "application/xml"]) { #expect($0.status == .notAcceptable) }

            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<1100 {
                    group.addTask { _ = try await store.create(AnnouncementDraft(title: "Bulk \(index)"), by: "alice") }
                }
                try await group.waitForAll()
            }
            try await client.execute(uri: "/events", method: .get, headers: auditor) { #expect($0.objects.count == 100) }
            try await client.execute(uri: "/events?limit=5000", method: .get, headers: auditor) { response in
                #expect(response.objects.count == 1000)
                #expect(response.objects.first?["seq"] as? Int == 1)
            }
            try await client.execute(uri: "/events?after=1000&limit=5000", method: .get, headers: auditor) { response in
                #expect(response.objects.map { $0["seq"] as? Int } == (1001...1108).map { $0 })
            }
        }
    }

    @Test("GET /events after a seq beyond the log is 409 naming the last seq, as JSON and as a stream, before any stream starts", arguments: [
        ("/events?after=14", [:]),
        ("/events?after=14", ["Accept": "text/event-stream"]),
        ("/events", ["Last-Event-ID": "14"]),
        ("/events?after=2", ["Accept": "text/event-stream", "Last-Event-ID": "14"]),
    ])
    func beyondTheLog(uri: String, headers: [String: String]) async throws {
        try await withServer { client, store in
            try await editAndDelete(client)
            for title in ["Nine", "Ten", "Eleven"] {
                try await client.execute(uri: "/announcements/1", method: .patch, headers: alice, body: body(#"{"title":"\#(title)"}"#)) { #expect($0.status == .ok) }
            }
            #expect(store.lastSeq == 11)
            // Through URLSession, with a deadline: a stream that started would never end.
            let port = try #require(client.port)
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)\(uri)")))
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let (status, contentType, data) = try await withThrowingTaskGroup(of: (Int, String?, Data).self) { [request] group in
                group.addTask {
                    let (data, response) = try await URLSession.shared.data(for: request)
                    let http = response as? HTTPURLResponse
                    return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type"), data)
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(60))
                    throw URLError(.timedOut)
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else { throw URLError(.unknown) }
                return first
            }
            #expect(status == 409)
            #expect(contentType == "application/json;charset=UTF-8")
            let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(object["error"] as? Int == 409)
            #expect(object["lastSeq"] as? Int == 11)
            #expect(object["after"] as? Int == 14)
            let source = headers["Last-Event-ID"] == nil ? "after=14" : "Last-Event-ID: 14"
            #expect(object["message"] as? String == "\(source) is beyond the end of the log, which ends at seq 11: it may have been restored from an older backup; resume from 11, or from 0 to read it all again")
            // At the end of the log is not beyond it: nothing yet, or a stream that waits.
            try await client.execute(uri: "/events?after=11", method: .get, headers: auditor) { #expect(String(buffer: $0.body) == "[]") }
        }
    }

    @Test("history, asOf and the feed come back after a restart: the index is rebuilt by replay")
    func afterRestart() async throws {
        let folder = NSTemporaryDirectory() + "audit-test-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withServer(folder: folder) { client, _ in try await editAndDelete(client) }
        try await withServer(folder: folder) { client, store in
            try await client.execute(uri: "/announcements/2/history", method: .get, headers: auditor) { response in
                #expect(response.objects.map { $0["seq"] as? Int } == [2, 7, 8])
            }
            try await client.execute(uri: "/announcements/2?asOf=7", method: .get, headers: auditor) { #expect($0.object["title"] as? String == "Renamed") }
            let stored = try storedLines(store)
            try await client.execute(uri: "/events?after=6", method: .get, headers: auditor) { response in
                #expect(String(buffer: response.body) == "[" + stored[6...7].joined(separator: ",") + "]")
            }
        }
    }
}
