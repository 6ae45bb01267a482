import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

/// `Accept` negotiated by quality values (RFC 9110): the representation a client prefers.
@Suite struct NegotiationAPITests {
    @Test("the Accept a client prefers wins, by q-value and then by how specific the range is", arguments: [
        ("application/json;q=0.5, application/xml", "application/xml;charset=UTF-8"),
        ("application/xml;q=0.5, application/json", "application/json;charset=UTF-8"),
        ("text/xml", "text/xml;charset=UTF-8"),
        ("text/*", "text/xml;charset=UTF-8"),
        ("*/*", "application/json;charset=UTF-8"),
        ("application/*;q=0.2, text/xml;q=0.9", "text/xml;charset=UTF-8"),
        ("application/json;q=0, */*", "application/xml;charset=UTF-8"),
        ("application/xml, application/json", "application/json;charset=UTF-8"),
        ("APPLICATION/XML;Q=0.9, application/json;q=0.1", "application/xml;charset=UTF-8"),
        ("*/*;q=0.1, application/json;q=0", "application/xml;charset=UTF-8"),
        ("image/png", nil),
        ("application/json;q=0", nil),
        ("text/html, application/json;q=0", nil),
        // A weight that does not parse leaves its range out, as in Accept-Encoding.
        ("application/xml;q=2, application/json;q=0.5", "application/json;charset=UTF-8"),
        ("application/xml;level=1;q=0.5, application/json;q=0.25", "application/xml;charset=UTF-8"),
        ("application/xml;q=high", nil),
    ] as [(String, String?)])
    func negotiates(accept: String, contentType: String?) async throws {
        try await withServer { client, _ in
            for uri in ["/announcements/1", "/announcements"] {
                try await client.execute(uri: uri, method: .get, headers: [.accept: accept]) { response in
                    if let contentType {
                        #expect(response.status == .ok, "\(uri)")
                        #expect(response.headers[.contentType] == contentType, "\(uri)")
                    } else {
                        #expect(response.status == .notAcceptable, "\(uri)")
                    }
                }
            }
        }
    }

    @Test("GET /events streams when Accept names text/event-stream at a weight no lower than JSON's, and serves the page otherwise", arguments: [
        ("text/event-stream", true),
        ("text/event-stream, application/json", true),
        ("application/json;q=0.5, text/event-stream", true),
        ("TEXT/EVENT-STREAM;Q=1", true),
        ("application/json, text/event-stream;q=0.1", false),
        ("*/*, text/event-stream;q=0.5", false),
        ("text/event-stream;q=0", false),
        ("text/*", false),
        ("*/*", false),
        ("application/json", false),
    ])
    func streamNegotiation(accept: String, streams: Bool) {
        let head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/events", headerFields: [.accept: accept])
        #expect(MediaType.asksForStream(Request(head: head, body: .init(buffer: ByteBuffer()))) == streams, "\(accept)")
    }

    @Test("text/xml is the XML's bytes under its own ETag, which an If-Match takes back")
    func textXML() async throws {
        try await withServer { client, store in
            let xml = try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "application/xml"])
            let text = try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "text/xml"])
            #expect(String(buffer: text.body) == String(buffer: xml.body))
            let tag = try #require(text.headers[.eTag])
            #expect(tag == "\"1-1-\(store.lineTag(of: 1))-textxml\"" && xml.headers[.eTag] == "\"1-1-\(store.lineTag(of: 1))-xml\"")
            var headers = alice
            headers[.ifMatch] = tag
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Tagged"}"#)) { #expect($0.status == .ok) }
        }
    }

    @Test("a browser's Accept (XML preferred, */* taken) gets JSON from the routes that have JSON only; XML only is 406 there")
    func jsonOnlyRoutes() async throws {
        try await withServer { client, _ in
            let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
            for uri in ["/events", "/announcements/1/history"] {
                let answer = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer audrey-secret", .accept: browser])
                #expect(answer.status == .ok && answer.headers[.contentType] == "application/json;charset=UTF-8", "\(uri)")
                let xmlOnly = try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer audrey-secret", .accept: "application/xml"])
                #expect(xmlOnly.status == .notAcceptable, "\(uri)")
            }
            // The list has XML, so the browser's preference wins there.
            let list = try await client.execute(uri: "/announcements", method: .get, headers: [.accept: browser])
            #expect(list.headers[.contentType] == "application/xml;charset=UTF-8")
        }
    }

    @Test("errors come in the negotiated format: XML with the same members as elements, escaped, and Vary: Accept")
    func errors() async throws {
        try await withServer { client, store in
            let declaration = #"<?xml version="1.0" encoding="UTF-8"?>"#
            let notFound = try await client.execute(uri: "/announcements/99", method: .get, headers: [.accept: "application/xml"])
            #expect(notFound.status == .notFound && notFound.headers[.contentType] == "application/xml;charset=UTF-8")
            #expect(String(buffer: notFound.body) == declaration + "<error><error>404</error><message>announcement 99 does not exist (it may have been deleted)</message></error>")
            #expect(notFound.headers[values: .vary].contains("Accept"))

            var headers = alice
            headers[.accept] = "application/json;q=0.5, application/xml"
            let invalid = try await client.execute(uri: "/announcements", method: .post, headers: headers, body: body(#"{"title":"  "}"#))
            #expect(invalid.status == .unprocessableContent)
            #expect(String(buffer: invalid.body) == declaration + "<error><error>422</error><message>the announcement is not valid: title must not be blank</message><errors><error><field>title</field><message>must not be blank</message></error></errors></error>")

            let forbidden = try await client.execute(uri: "/announcements", method: .post, headers: [.authorization: "Bearer audrey-secret", .contentType: "application/json", .accept: "text/xml"], body: body(#"{"title":"T"}"#))
            #expect(forbidden.status == .forbidden && forbidden.headers[.contentType] == "text/xml;charset=UTF-8")
            #expect(String(buffer: forbidden.body).hasSuffix("<needs><value>author</value><value>editor</value><value>admin</value></needs><role>auditor</role></error>"), "\(String(buffer: forbidden.body))")

            // What the request sent, quoted back: escaped, and a character XML cannot carry replaced.
            let quoted = try await client.execute(uri: "/announcements/1?asOf=%3Cx%3E%01%26", method: .get, headers: [.authorization: "Bearer audrey-secret", .accept: "application/xml"])
            #expect(quoted.status == .badRequest)
            #expect(String(buffer: quoted.body).contains("not &quot;&lt;x&gt;\u{FFFD}&amp;&quot;</message>"), "\(String(buffer: quoted.body))")

            // JSON when JSON is preferred or nothing is said, and when Accept allows nothing (406).
            for accept in ["application/json", "*/*", "image/png"] {
                let answer = try await client.execute(uri: "/announcements/99", method: .get, headers: [.accept: accept])
                #expect(answer.headers[.contentType] == "application/json;charset=UTF-8", "\(accept)")
                #expect(answer.object["error"] as? Int == (accept == "image/png" ? 406 : 404))
            }
            #expect(store.snapshot.seq == 6, "nothing appended")
        }
    }
}
