import AnnouncementsDomain
import AnnouncementsStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
@testable import AnnouncementsHTTP

@Suite struct ControlCharacterAPITests {
    @Test("a write with a control character in its title is 422, naming the field and the code point", arguments: [
        (#"\u001b"#, "U+001B"), (#"\u0007"#, "U+0007"), (#"\r"#, "U+000D"), (#"\n"#, "U+000A"), (#"\u0000"#, "U+0000"), (#"\u0085"#, "U+0085"),
    ])
    func titleRefused(escape: String, codePoint: String) async throws {
        try await withServer { client, store in
            let message = "must not contain control characters (\(codePoint) at character 5)"
            for (method, uri) in [(HTTPRequest.Method.post, "/announcements"), (.put, "/announcements/1"), (.patch, "/announcements/1")] {
                try await client.execute(uri: uri, method: method, headers: alice, body: body(#"{"title":"Fire\#(escape)drill"}"#)) { response in
                    #expect(response.status == .unprocessableContent, "\(method)")
                    #expect(response.object["message"] as? String == "the announcement is not valid: title \(message)")
                    let errors = response.object["errors"] as? [[String: String]]
                    #expect(errors == [["field": "title", "message": message]], "\(method)")
                }
            }
            #expect(store.snapshot.seq == 6, "nothing was written")
        }
    }

    @Test("a title with U+FFFE or U+FFFF (escaped or raw) is 422 naming the field and the code point, and XML lists keep working for everyone", arguments: [
        (#"\uFFFE"#, "U+FFFE"), (#"\uffff"#, "U+FFFF"), ("\u{EF}\u{BF}\u{BE}", "U+FFFE"),
    ])
    func xmlNoncharacters(spelling: String, codePoint: String) async throws {
        try await withServer { client, store in
            // A raw spelling is its UTF-8 bytes, sent as they are.
            let bytes: [UInt8] = spelling.hasPrefix("\\") ? Array(#"{"title":"Fire\#(spelling)drill"}"#.utf8)
                : Array(#"{"title":"Fire"#.utf8) + spelling.unicodeScalars.map { UInt8($0.value) } + Array(#"drill"}"#.utf8)
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: ByteBuffer(bytes: bytes)) { response in
                #expect(response.status == .unprocessableContent)
                let errors = response.object["errors"] as? [[String: String]]
                #expect(errors?.first?["field"] == "title")
                #expect(errors?.first?["message"]?.hasPrefix("must not contain noncharacters (\(codePoint) at character 5)") == true, "\(String(describing: errors))")
            }
            #expect(store.snapshot.seq == 6, "nothing was written")
            try await client.execute(uri: "/announcements", method: .get, headers: [.accept: "application/xml"]) { response in
                #expect(response.status == .ok)
            }
        }
    }

    @Test("a body may hold tab, CR and LF; ESC is 422 on the field `body`")
    func bodies() async throws {
        try await withServer { client, store in
            try await client.execute(uri: "/announcements", method: .post, headers: alice, body: body(#"{"title":"T","body":"<p>a</p>\r\n\t<p>b</p>"}"#)) { response in
                #expect(response.status == .created)
                #expect(response.object["body"] as? String == "<p>a</p>\r\n\t<p>b</p>")
            }
            try await client.execute(uri: "/announcements/7", method: .patch, headers: alice, body: body(#"{"body":"<p>\u001b[2K</p>"}"#)) { response in
                #expect(response.status == .unprocessableContent)
                let errors = response.object["errors"] as? [[String: String]]
                #expect(errors == [["field": "body", "message": "must not contain control characters other than tab, line feed and carriage return (U+001B at character 4)"]])
            }
            #expect(store.snapshot.seq == 7)
        }
    }

    /// A folder whose log, written before titles refused control characters, holds U+0001 in
    /// announcement 2's title and a CR in announcement 1's body.
    static func oldLog() throws -> String {
        let folder = NSTemporaryDirectory() + "http-old-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            {"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00Z","by":"a","data":{"title":"Fine","body":"a\\r\\nb"}}
            {"seq":2,"type":"created","id":2,"at":"2026-11-21T09:30:01Z","by":"a","data":{"title":"Old\\u0001title","body":null}}

            """.write(toFile: folder + "/log.jsonl", atomically: true, encoding: .utf8)
        return folder
    }

    @Test("XML refuses, with a 406 that says why, a value XML 1.0 cannot carry; JSON carries it; a CR is a character reference")
    func xml() async throws {
        let folder = try Self.oldLog()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await withServer(seed: [], folder: folder) { client, store in
            let xml: HTTPFields = [.accept: "application/xml", acceptVersion: "1.0", .authorization: "Bearer audrey-secret"]
            let refusal = "announcement 2's title holds U+0001 at character 4, which XML 1.0 cannot carry: ask for application/json, or have a writer correct the title"
            for uri in ["/announcements/2", "/announcements", "/v2/announcements", "/announcements/2?asOf=2"] {
                try await client.execute(uri: uri, method: .get, headers: xml) { response in
                    #expect(response.status == .notAcceptable, "\(uri)")
                    // The refusal itself is XML, as asked: it names the character, it does not hold it.
                    #expect(response.headers[.contentType] == "application/xml;charset=UTF-8", "\(uri)")
                    #expect(String(buffer: response.body).contains("<message>\(refusal.replacingOccurrences(of: "'", with: "&apos;"))</message>"), "\(uri)")
                }
            }
            try await client.execute(uri: "/announcements/2", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(#""title":"Old\u0001title""#))
            }
            try await client.execute(uri: "/announcements/1", method: .get, headers: xml) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("<body>a&#xD;\nb</body>"))
            }
            // A write is done whatever XML can carry: its answer is then JSON, not a 406.
            var headers = alice
            headers[.accept] = "application/xml"
            try await client.execute(uri: "/announcements/2", method: .patch, headers: headers, body: body(#"{"body":"<p>new</p>"}"#)) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "application/json;charset=UTF-8")
                #expect(response.headers[.eTag] == "\"2-3-\(store.lineTag(of: 3))\"")
                #expect(response.object["body"] as? String == "<p>new</p>")
            }
            try await client.execute(uri: "/announcements/2", method: .patch, headers: headers, body: body(#"{"title":"New title"}"#)) { response in
                #expect(response.headers[.contentType] == "application/xml;charset=UTF-8")
            }
            try await client.execute(uri: "/announcements", method: .get, headers: xml) { response in
                #expect(response.status == .ok, "a corrected title makes the list XML again")
            }
        }
    }
}
