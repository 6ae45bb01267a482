import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import HummingbirdTesting
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

    @Test("text/xml is the XML's bytes under its own ETag, which an If-Match takes back")
    func textXML() async throws {
        try await withServer { client, _ in
            let xml = try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "application/xml"])
            let text = try await client.execute(uri: "/announcements/1", method: .get, headers: [.accept: "text/xml"])
            #expect(String(buffer: text.body) == String(buffer: xml.body))
            let tag = try #require(text.headers[.eTag])
            #expect(tag == "\"1-1-textxml\"" && xml.headers[.eTag] == "\"1-1-xml\"")
            var headers = alice
            headers[.ifMatch] = tag
            try await client.execute(uri: "/announcements/1", method: .patch, headers: headers, body: body(#"{"title":"Tagged"}"#)) { #expect($0.status == .ok) }
        }
    }
}
