import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// `GET /announcements?q=…`: search, in every version, paged like the list.
@Suite struct SearchAPITests {
    let writer: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json"]

    @Test("finds the words in titles and bodies, title matches first, in each version", arguments: ["1.0", "2.0", "3.0"])
    func search(version: String) async throws {
        try await withServer { client, _ in
            // Seeded: six "Grails …" titles, each body "Body of announcement N & more".
            let created = try await client.execute(
                uri: "/announcements", method: .post, headers: writer,
                body: ByteBuffer(string: #"{"title":"Café menu","body":"<p>Grails &amp; coffee for the <em>Quickcast</em> team</p>"}"#)
            ).object
            let id = try #require(created["id"] as? Int)
            let response = try await client.execute(uri: "/announcements?q=grails%20QUICK", method: .get, headers: [acceptVersion: version])
            #expect(response.status == .ok)
            #expect(response.headers[HTTPField.Name("API-Version")!] == version)
            #expect(response.objects.compactMap { $0["id"] as? Int } == [4, 3, 2, 1, id], "titles holding both words, newest first; then the body match")
            #expect(response.headers[HTTPField.Name("X-Total-Count")!] == "5")
            let accented = try await client.execute(uri: "/announcements?q=CAFE", method: .get, headers: [acceptVersion: version])
            #expect(accented.objects.compactMap { $0["id"] as? Int } == [id])
        }
    }

    @Test("pages like the list: max, offset, and Link headers that keep the query")
    func paging() async throws {
        try await withServer { client, _ in
            let first = try await client.execute(uri: "/announcements?q=grails&max=2", method: .get)
            #expect(first.objects.compactMap { $0["id"] as? Int } == [6, 5])
            #expect(first.headers[HTTPField.Name("X-Total-Count")!] == "6")
            let link = try #require(first.headers[.link])
            #expect(link == "</announcements?offset=2&max=2&q=grails>; rel=\"next\"")
            // The link as it came: the next page.
            let next = String(link.dropFirst().prefix { $0 != ">" })
            let second = try await client.execute(uri: next, method: .get)
            #expect(second.status == .ok)
            #expect(second.objects.compactMap { $0["id"] as? Int } == [4, 3])
            let previous = try #require(second.headers[.link]?.split(separator: ", ").first { $0.hasSuffix(#"rel="prev""#) })
            let back = try await client.execute(uri: String(previous.dropFirst().prefix { $0 != ">" }), method: .get)
            #expect(back.objects.compactMap { $0["id"] as? Int } == [6, 5])
            let spaced = try await client.execute(uri: "/announcements?q=json%20&max=1", method: .get)
            #expect(spaced.objects.compactMap { $0["id"] as? Int } == [2])
            #expect(spaced.headers[.link] == nil)
        }
    }

    @Test("a search box's form sends q with + for a space: it is one; %2B is a +")
    func formEncoded() async throws {
        try await withServer { client, _ in
            let response = try await client.execute(uri: "/announcements?q=json+vie", method: .get)
            #expect(response.objects.compactMap { $0["id"] as? Int } == [2])
            let plus = try await client.execute(uri: "/announcements?q=json%2Bviews", method: .get)
            #expect(plus.objects.compactMap { $0["id"] as? Int } == [2], "a + between words separates them too")
        }
    }

    @Test("an edit or a delete is seen by the next search")
    func current() async throws {
        try await withServer { client, _ in
            let renamed = try await client.execute(uri: "/announcements/3", method: .patch, headers: writer, body: ByteBuffer(string: #"{"title":"Monorepo builds"}"#))
            #expect(renamed.status == .ok)
            let deleted = try await client.execute(uri: "/announcements/2", method: .delete, headers: writer)
            #expect(deleted.status == .noContent)
            let found = try await client.execute(uri: "/announcements?q=quickcast", method: .get)
            #expect(found.objects.compactMap { $0["id"] as? Int } == [4, 1])
            let monorepo = try await client.execute(uri: "/announcements?q=monorepo", method: .get)
            #expect(monorepo.objects.compactMap { $0["id"] as? Int } == [3])
        }
    }

    @Test("a q without a word, too long, with asOf, or with sort is a 400 naming the problem", arguments: [
        ("/announcements?q=", "holds no word"),
        ("/announcements?q=%20-%20", "holds no word"),
        ("/announcements?q=" + String(repeating: "a", count: 201), "at most 200"),
        ("/announcements?q=a%20b%20c%20d%20e%20f%20g%20h%20i", "at most 8"),
        ("/announcements?q=grails&sort=title", "do not go with `q`"),
        ("/announcements?q=grails&asOf=1", "do not go together"),
    ])
    func refused(uri: String, message: String) async throws {
        try await withServer { client, _ in
            let response = try await client.execute(uri: uri, method: .get, headers: auditor)
            #expect(response.status == .badRequest)
            #expect((response.object["message"] as? String)?.contains(message) == true, "\(response.object)")
        }
    }
}
