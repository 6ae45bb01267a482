import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// Thirty announcements with bodies of about 1.1 KB (HTML, quotes to escape, some non-ASCII), and
/// a shorter one: each of the thirty is over 1 KB as JSON, and announcement 31 under it, though
/// it would compress well.
private let wordy = (1...30).map { number in
    AnnouncementDraft(
        title: "Quarterly update \(number): the café reopens",
        body: "<p>" + String(repeating: "The team meets on “Monday” in room \(number) at 10:00; <a href=\"https://intranet.example.com/news\">read more</a>. ", count: 10) + "</p>"
    )
} + [AnnouncementDraft(title: "Short", body: "<p>" + String(repeating: "tea and cake ", count: 40) + "</p>")]

private let acceptEncoding = HTTPField.Name("Accept-Encoding")!
private let v1Page = "/v1/announcements?max=100"

/// The response's headers and body, read off the wire as they came.
private struct Answer {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    var coding: String? { headers[.contentEncoding] }
    var etag: String? { headers[.eTag] }
}

/// A request with `headers`, sent with the auditor's token (which reads history and past states too).
private func get(_ client: some TestClientProtocol, _ uri: String, _ headers: HTTPFields = [:], method: HTTPRequest.Method = .get) async throws -> Answer {
    var headers = headers
    headers[.authorization] = auditor[.authorization]
    return try await client.execute(uri: uri, method: method, headers: headers) { Answer(status: $0.status, headers: $0.headers, body: $0.body) }
}

private func gzip(_ extra: HTTPFields = [:]) -> HTTPFields {
    var headers: HTTPFields = [acceptEncoding: "gzip"]
    headers.append(contentsOf: extra)
    return headers
}

@Suite struct CompressionAPITests {
    @Test("a v1 page asked for with gzip comes gzipped, and decompresses to exactly the plain bytes; deflate likewise, in the zlib format")
    func gzipDecompressesToPlain() async throws {
        try await withServer(seed: wordy) { client, _ in
            let plain = try await get(client, v1Page)
            #expect(plain.status == .ok)
            #expect(plain.coding == nil)
            #expect(plain.body.readableBytes > 10 * ContentCoding.minimumBytes)

            let gzipped = try await get(client, v1Page, gzip())
            #expect(gzipped.status == .ok)
            #expect(gzipped.coding == "gzip")
            #expect(gzipped.headers[.contentLength] == String(gzipped.body.readableBytes))
            #expect(gzipped.headers[.contentType] == plain.headers[.contentType])
            #expect(gzipped.headers[HTTPField.Name("X-Total-Count")!] == "31")
            #expect(gzipped.body.readableBytes * 4 < plain.body.readableBytes, "\(gzipped.body.readableBytes) of \(plain.body.readableBytes) bytes")
            #expect(gzipped.body.getBytes(at: gzipped.body.readerIndex, length: 2) == [0x1F, 0x8B], "a gzip member's magic number")
            #expect(try Zlib.decompress(gzipped.body, as: .gzip) == plain.body)

            let deflated = try await get(client, v1Page, [acceptEncoding: "deflate"])
            #expect(deflated.coding == "deflate")
            #expect(deflated.body.getInteger(at: deflated.body.readerIndex, as: UInt8.self) == 0x78, "a zlib stream's header, not raw deflate")
            #expect(try Zlib.decompress(deflated.body, as: .deflate) == plain.body)

            // A single announcement of 1 KB or more, and the XML page, compress too.
            let item = try await get(client, "/announcements/1", [acceptEncoding: "gzip", .accept: "application/xml"])
            let plainItem = try await get(client, "/announcements/1", [.accept: "application/xml"])
            #expect(item.coding == "gzip")
            #expect(try Zlib.decompress(item.body, as: .gzip) == plainItem.body)
        }
    }

    @Test("without Accept-Encoding, or with one that allows neither gzip nor deflate, the body comes plain", arguments: [
        nil, "", "identity", "br", "gzip;q=0", "gzip;q=0, deflate;q=0.000", "*;q=0", "gzip;q=0.5, identity", "gzip;q=2", "gzip;q=high",
    ] as [String?])
    func plainWhenNotAllowed(header: String?) async throws {
        try await withServer(seed: wordy) { client, _ in
            let headers: HTTPFields = header.map { [acceptEncoding: $0] } ?? [:]
            let answer = try await get(client, v1Page, headers)
            #expect(answer.status == .ok)
            #expect(answer.coding == nil)
            #expect(answer.etag.map { $0.hasPrefix("\"list-1.0-") && !$0.contains("gzip") && !$0.contains("deflate") } == true, "the plain body's tag: \(answer.etag ?? "none")")
            #expect(answer.headers[.vary] == "Accept-Version, Accept, Accept-Encoding", "Vary is the same whatever is sent")
            #expect(answer.body.getBytes(at: answer.body.readerIndex, length: 2) == Array("[{".utf8))
        }
    }

    @Test("weights choose the coding: gzip before deflate unless deflate weighs more, * stands for both", arguments: [
        ("gzip, deflate", "gzip"), ("deflate, gzip", "gzip"), ("deflate;q=1, gzip;q=0.9", "deflate"), ("gzip;q=0, *", "deflate"),
        ("*", "gzip"), ("x-gzip", "gzip"), ("GZIP ; Q=0.8", "gzip"), ("br;q=1, gzip;q=0.1", "gzip"),
    ])
    func weights(header: String, coding: String) async throws {
        try await withServer(seed: wordy) { client, _ in
            let answer = try await get(client, v1Page, [acceptEncoding: header])
            #expect(answer.coding == coding)
        }
    }

    @Test("a body under 1 KB goes plain, with the plain ETag, even when gzip is allowed")
    func smallStaysPlain() async throws {
        try await withServer(seed: wordy) { client, store in
            let small = try await get(client, "/announcements/31", gzip())
            #expect(small.status == .ok)
            #expect(small.body.readableBytes < ContentCoding.minimumBytes)
            #expect(small.coding == nil)
            #expect(small.etag == "\"31-31-\(store.lineTag(of: 31))\"")
            #expect(small.headers[.vary] == "Accept-Version, Accept, Accept-Encoding")
            #expect(String(buffer: small.body).contains(#""title":"Short""#))
        }
    }

    @Test("ETags differ per coding, and If-None-Match gives a 304 only for the representation the request selects")
    func etagsPerCoding() async throws {
        try await withServer(seed: wordy) { client, _ in
            for uri in [v1Page, "/announcements/1"] {
                let plain = try await get(client, uri)
                let gzipped = try await get(client, uri, gzip())
                let deflated = try await get(client, uri, [acceptEncoding: "deflate"])
                let tag = try #require(plain.etag)
                #expect(gzipped.etag == String(tag.dropLast()) + "-gzip\"")
                #expect(deflated.etag == String(tag.dropLast()) + "-deflate\"")
                let gzipTag = try #require(gzipped.etag)

                let fresh = try await get(client, uri, gzip([.ifNoneMatch: gzipTag]))
                #expect(fresh.status == .notModified)
                #expect(fresh.etag == gzipTag)
                #expect(fresh.headers[.vary] == "Accept-Version, Accept, Accept-Encoding")
                #expect(fresh.body.readableBytes == 0)
                #expect(try await get(client, uri, [.ifNoneMatch: tag]).status == .notModified)

                // A tag of another representation does not match: the full body of this one comes.
                let switchedToGzip = try await get(client, uri, gzip([.ifNoneMatch: tag]))
                #expect(switchedToGzip.status == .ok && switchedToGzip.coding == "gzip")
                let switchedToPlain = try await get(client, uri, [.ifNoneMatch: gzipTag])
                #expect(switchedToPlain.status == .ok && switchedToPlain.coding == nil)
                #expect(switchedToPlain.body == plain.body)
                let deflateTag = try #require(deflated.etag)
                #expect(try await get(client, uri, gzip([.ifNoneMatch: deflateTag])).status == .ok)
            }
        }
    }

    @Test("HEAD gives the headers GET gives, Content-Encoding and the compressed Content-Length with them")
    func head() async throws {
        try await withServer(seed: wordy) { client, _ in
            let got = try await get(client, v1Page, gzip())
            let head = try await get(client, v1Page, gzip(), method: .head)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
            for name in [HTTPField.Name.contentEncoding, .contentLength, .eTag, .vary, .contentType] {
                #expect(head.headers[name] == got.headers[name], "\(name)")
            }
            #expect(head.headers[.contentLength] == String(got.body.readableBytes))
        }
    }

    @Test("after a write the page is compressed again: the gzip body holds the new announcement, under a new ETag")
    func recompressedAfterWrite() async throws {
        try await withServer(seed: wordy) { client, _ in
            let before = try await get(client, v1Page, gzip())
            let created = try await client.execute(
                uri: "/announcements", method: .post, headers: alice,
                body: body(#"{"title":"Fire drill at 11:00","body":"<p>Bring a coat</p>"}"#)
            ) { $0.status }
            #expect(created == .created)
            let after = try await get(client, v1Page, gzip())
            #expect(after.coding == "gzip")
            #expect(after.etag != before.etag)
            #expect(after.headers[HTTPField.Name("X-Total-Count")!] == "32")
            let text = String(buffer: try Zlib.decompress(after.body, as: .gzip))
            #expect(text.contains("Fire drill at 11:00"))
            #expect(try Zlib.decompress(after.body, as: .gzip) == (try await get(client, v1Page)).body)
        }
    }

    @Test("a write's If-Match takes the ETag of the compressed body too: it names the same revision")
    func ifMatchTakesCompressedTag() async throws {
        try await withServer(seed: wordy) { client, store in
            let read = try await get(client, "/announcements/1", gzip())
            let tag = try #require(read.etag)
            #expect(tag == "\"1-1-\(store.lineTag(of: 1))-gzip\"")
            var headers = alice
            headers[.ifMatch] = tag
            let status = try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Renamed"}"#)) { $0.status }
            #expect(status == .ok)
            // The same tag is stale now: a 412, as the plain one would be.
            let again = try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Again"}"#)) { $0.status }
            #expect(again == .preconditionFailed)
        }
    }

    @Test("history, an announcement as it was, a page of the event feed and the OpenAPI document compress too")
    func otherLargeResponses() async throws {
        try await withServer(seed: wordy) { client, _ in
            let patched = try await client.execute(uri: "/announcements/2", method: .patch, headers: alice, body: body(#"{"title":"Edited"}"#)) { $0.status }
            #expect(patched == .ok)
            for uri in ["/announcements/2/history", "/announcements/2?asOf=2", "/events?limit=20", "/openapi.yaml"] {
                let plain = try await get(client, uri)
                let gzipped = try await get(client, uri, gzip())
                #expect(plain.status == .ok && gzipped.status == .ok, "\(uri)")
                #expect(plain.coding == nil, "\(uri)")
                #expect(gzipped.coding == "gzip", "\(uri)")
                #expect(gzipped.headers[values: .vary].joined(separator: ", ").contains("Accept-Encoding"), "\(uri)")
                #expect(try Zlib.decompress(gzipped.body, as: .gzip) == plain.body, "\(uri)")
            }
        }
    }

    @Test("history revalidates per coding: its gzip tag is a 304 for gzip, its plain tag for a client that takes no coding")
    func historyRevalidates() async throws {
        try await withServer(seed: wordy) { client, _ in
            let uri = "/announcements/3/history"
            let edited = try await client.execute(uri: "/announcements/3", method: .patch, headers: alice, body: body(#"{"title":"Edited"}"#)) { $0.status }
            #expect(edited == .ok)
            let gzipped = try await get(client, uri, gzip())
            let plain = try await get(client, uri)
            let gzipTag = try #require(gzipped.etag)
            let tag = try #require(plain.etag)
            #expect(gzipTag == String(tag.dropLast()) + "-gzip\"")
            #expect(try await get(client, uri, gzip([.ifNoneMatch: gzipTag])).status == .notModified)
            #expect(try await get(client, uri, [.ifNoneMatch: tag]).status == .notModified)
            #expect(try await get(client, uri, [.ifNoneMatch: gzipTag]).status == .ok)
            let switched = try await get(client, uri, gzip([.ifNoneMatch: tag]))
            #expect(switched.status == .ok && switched.coding == "gzip")
        }
    }

    @Test("a short history revalidates with its plain tag even when gzip is allowed: it was never compressed")
    func shortHistoryRevalidates() async throws {
        try await withServer(seed: wordy) { client, _ in
            let uri = "/announcements/31/history"
            let first = try await get(client, uri, gzip())
            #expect(first.coding == nil)
            let tag = try #require(first.etag)
            #expect(!tag.contains("gzip"))
            let again = try await get(client, uri, gzip([.ifNoneMatch: tag]))
            #expect(again.status == .notModified)
            #expect(again.etag == tag)
        }
    }
}
