import AnnouncementsDomain
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import AnnouncementsHTTP

/// A query parameter a route does not take is a 400 that names it and the ones the route takes.
@Suite struct QueryAPITests {
    @Test("an unknown query parameter is a 400 naming it and the known ones; known ones still work", arguments: [
        ("/announcements?limit=5", HTTPRequest.Method.get, "unknown query parameter `limit`: GET /announcements takes `max`, `offset`, `sort`, `order`, `asOf`, `q`"),
        ("/announcements?max=2&page=2", .get, "unknown query parameter `page`: GET /announcements takes `max`, `offset`, `sort`, `order`, `asOf`, `q`"),
        ("/v1/announcements/1?fields=title", .get, "unknown query parameter `fields`: GET /v1/announcements/{id} takes `asOf`"),
        ("/health?verbose", .get, "unknown query parameter `verbose`: GET /health takes no query parameter"),
        ("/events?since=3", .get, "unknown query parameter `since`: GET /events takes `after`, `limit`"),
        ("/announcements/1?asOf=3", .delete, "unknown query parameter `asOf`: DELETE /announcements/{id} takes no query parameter"),
    ])
    func unknown(uri: String, method: HTTPRequest.Method, message: String) async throws {
        try await withServer { client, store in
            try await client.execute(uri: uri, method: method, headers: alice) { response in
                #expect(response.status == .badRequest)
                #expect(response.object["message"] as? String == message)
            }
            #expect(store.snapshot.seq == 6, "nothing appended")
        }
    }

    @Test("a known query parameter given twice (even with the same value) is a 400 naming it, before anything is read or written", arguments: [
        ("/announcements?max=5&max=50", "max"), ("/announcements?q=fire&offset=1&q=drill", "q"), ("/v1/announcements/1?asOf=2&asOf=2", "asOf"),
        ("/events?after=1&limit=2&after=3", "after"), ("/?q=a&q=b", "q"),
    ])
    func repeated(uri: String, name: String) async throws {
        try await withServer { client, store in
            try await client.execute(uri: uri, method: .get, headers: auditor) { response in
                #expect(response.status == .badRequest)
                let text = String(buffer: response.body)
                // (The web board's page starts the sentence with a capital.)
                #expect(text.contains("uery parameter `\(name)` is given more than once: give it once"), "\(text)")
            }
            #expect(store.snapshot.seq == 6)
        }
    }

    @Test("a page of the web client ignores a parameter no route takes (a shared link's utm_source or fbclid) and keeps the ones it does", arguments: [
        ("/a/1?fbclid=x", "Grails Quickcast #1", nil), ("/?utm_source=newsletter&utm_medium=email", "Grails Quickcast #1", nil),
        ("/?q=interceptors&fbclid=x", "Search: interceptors", "Grails Quickcast #2"), ("/sign-in?next=%2Fa%2F2&utm_source=x", #"name="next" value="/a/2""#, nil),
    ])
    func pageIgnoresUnknown(uri: String, text: String, absent: String?) async throws {
        try await withServer { client, _ in
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .ok, "\(uri)")
                let html = String(buffer: response.body)
                #expect(html.contains(text), "\(uri)")
                if let absent { #expect(!html.contains(absent), "the parameter it takes still counts: \(uri)") }
            }
        }
    }

    @Test("a page still refuses a parameter it takes given twice, and one another route takes; a form's POST refuses one no route takes")
    func pageRefusals() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/?q=a&fbclid=x&q=b", method: .get) { #expect($0.status == .badRequest) }
            for uri in ["/a/1?asOf=3", "/?max=50", "/?sort=title"] {
                try await client.execute(uri: uri, method: .get) { #expect($0.status == .badRequest, "\(uri)") }
            }
            try await client.execute(uri: "/sign-in?fbclid=x", method: .post, headers: [.contentType: "application/x-www-form-urlencoded", .origin: "http://localhost"], body: ByteBuffer(string: "token=x")) { response in
                #expect(response.status == .badRequest)
                #expect(String(buffer: response.body).contains("fbclid"))
            }
        }
    }

    @Test("the known ones are taken as before")
    func known() async throws {
        try await withServer { client, _ in
            try await client.execute(uri: "/announcements?max=2&offset=1&sort=title&order=desc", method: .get) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements/1?asOf=3", method: .get, headers: auditor) { #expect($0.status == .ok) }
            try await client.execute(uri: "/events?after=2&limit=1", method: .get, headers: auditor) { #expect($0.status == .ok) }
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"No query"}"#)) { #expect($0.status == .created) }
        }
    }
}
