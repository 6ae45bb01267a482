@testable import AnnouncementsClient
import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import Testing

/// A hundred announcements with bodies of about 1 KB: a v1 page of them is some 100 KB of JSON.
private let hundred = (1...100).map { number in
    AnnouncementDraft(
        title: "Quarterly update \(number): the café reopens",
        body: "<p>" + String(repeating: "The team meets on “Monday” in room \(number) at 10:00; <a href=\"https://intranet.example.com/news\">read more</a>. ", count: 9) + "</p>"
    )
}

@Suite struct ClientCompressionTests {
    @Test("every request asks for gzip, and only gzip, on every platform")
    func asksForGzip() async throws {
        try await withFakeServer { url in
            let client = AnnouncementsClient(baseURL: url, timeout: testTimeout)
            let echoed = try await client.announcement(id: 5)
            #expect(echoed.title == "gzip")
        }
    }

    @Test("a v1 page of 100 crosses the wire gzipped and arrives decoded; the next read of it is a 304")
    func gzippedPage() async throws {
        try await withServer(seed: hundred) { url in
            let client = AnnouncementsClient(baseURL: url, version: .v1, timeout: testTimeout)
            let query = [URLQueryItem(name: "max", value: "100")]
            let received = try await client.send(.get, path: "announcements", query: query)
            #expect(received.header("Content-Encoding") == "gzip", "the server sent gzip")
            let wire = try #require(received.header("Content-Length").flatMap(Int.init))
            #expect(wire * 4 < received.data.count, "\(wire) bytes on the wire for \(received.data.count) of JSON")
            #expect(received.data.first == UInt8(ascii: "["), "URLSession decoded it")

            let page = try await client.announcements(max: 100)
            #expect(page.items.count == 100)
            #expect(page.items.last?.title == "Quarterly update 100: the café reopens")
            #expect(page.items.first?.body == hundred[0].body)
            let before = client.statistics
            #expect(try await client.announcements(max: 100) == page)
            #expect(client.statistics.notModified == before.notModified + 1, "the gzip ETag was sent back and matched")
        }
    }

    @Test("an announcement read gzipped carries the gzip ETag as its revision, which a write takes as If-Match")
    func revisionFromGzippedRead() async throws {
        try await withServer(seed: hundred) { url in
            let client = AnnouncementsClient(baseURL: url, token: "alice-secret", timeout: testTimeout)
            let read = try await client.announcement(id: 7)
            #expect(read.revision?.wholeMatch(of: try Regex(#""7-7-[0-9a-f]{8}-gzip""#)) != nil, "\(read.revision ?? "none")")
            #expect(read.body == hundred[6].body)
            let edited = try await client.update(id: 7, title: "Moved to Tuesday", ifMatch: read.revision)
            #expect(edited.title == "Moved to Tuesday")
            await #expect(throws: ClientError.self) { try await client.update(id: 7, title: "Stale", ifMatch: read.revision) }
        }
    }
}
