import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// Version 3: list items and announcements with when each was created and last changed, its
/// revision and an excerpt, in JSON and XML; versions 1 and 2 as they were.
@Suite struct VersionThreeAPITests {
    let writer: HTTPFields = [.authorization: "Bearer alice-secret", .contentType: "application/json"]

    @Test("a v3 list item has id, title, createdAt, updatedAt, revision and excerpt, and no body")
    func list() async throws {
        try await withServer { client, store in
            let live = try #require(store.snapshot.announcement(id: 2))
            try await client.execute(uri: "/announcements?max=3", method: .get, headers: [acceptVersion: "3.0"]) { response in
                #expect(response.status == .ok)
                #expect(response.headers[HTTPField.Name("API-Version")!] == "3.0")
                let item = try #require(response.objects.dropFirst().first)
                #expect(Set(item.keys) == ["id", "title", "createdAt", "updatedAt", "revision", "excerpt"])
                #expect(item["id"] as? Int == 2)
                #expect(item["createdAt"] as? String == live.createdAt.description)
                #expect(item["updatedAt"] as? String == live.updatedAt.description)
                #expect(item["revision"] as? Int == live.revision)
                #expect(item["excerpt"] as? String == "Body of announcement 2 & more", "markup out, references decoded")
            }
        }
    }

    @Test("a v3 announcement adds the same fields to v1's, and an edit moves updatedAt and revision, not createdAt")
    func item() async throws {
        try await withServer { client, _ in
            let before = try await client.execute(uri: "/v3/announcements/1", method: .get).object
            #expect(before["body"] as? String == "<p>Body of announcement 1 &amp; more</p>")
            #expect(before["createdAt"] as? String == before["updatedAt"] as? String)
            let edited = try await client.execute(
                uri: "/announcements/1", method: .patch, headers: writer.merging([acceptVersion: "3"]),
                body: ByteBuffer(string: #"{"title":"Renamed"}"#)
            )
            #expect(edited.status == .ok)
            #expect(edited.headers[.eTag]?.contains("-v3") == true, "v3's representation has a tag of its own")
            let after = edited.object
            #expect(after["createdAt"] as? String == before["createdAt"] as? String)
            #expect((after["updatedAt"] as? String ?? "") >= (before["updatedAt"] as? String ?? "~"))
            #expect((after["revision"] as? Int ?? 0) > (before["revision"] as? Int ?? .max))
            // The v3 ETag names the revision for a conditional write, as v1's does.
            let tag = try #require(edited.headers[.eTag])
            let conditional = try await client.execute(
                uri: "/announcements/1", method: .patch, headers: writer.merging([.ifMatch: tag]),
                body: ByteBuffer(string: #"{"title":"Renamed again"}"#)
            )
            #expect(conditional.status == .ok)
            // v1 and v2 are as they were: no new field.
            for version in ["1.0", "2.0"] {
                let old = try await client.execute(uri: "/announcements/1", method: .get, headers: [acceptVersion: version]).object
                #expect(Set(old.keys) == ["id", "title", "body"])
            }
        }
    }

    @Test("v3 in XML: the same fields as elements")
    func xml() async throws {
        try await withServer { client, _ in
            let response = try await client.execute(uri: "/v3/announcements?max=1", method: .get, headers: [.accept: "application/xml"])
            let text = String(buffer: response.body)
            #expect(response.status == .ok)
            #expect(text.contains("<announcement><id>1</id><title>Grails Quickcast #1: Grails Interceptors</title><createdAt>"))
            #expect(text.contains("<revision>1</revision><excerpt>Body of announcement 1 &amp; more</excerpt></announcement>"))
            #expect(!text.contains("<body"))
        }
    }
}

extension HTTPFields {
    func merging(_ other: HTTPFields) -> HTTPFields {
        var merged = self
        for field in other { merged[field.name] = field.value }
        return merged
    }
}
