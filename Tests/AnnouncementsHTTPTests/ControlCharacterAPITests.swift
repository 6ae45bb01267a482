import AnnouncementsCore
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
}
