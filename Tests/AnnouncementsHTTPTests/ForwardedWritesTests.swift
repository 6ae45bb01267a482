@testable import AnnouncementsHTTP
import HTTPTypes
import NIOCore
import Testing

/// The form of forwarded writes and their answers between nodes.
struct ForwardedWritesTests {
    @Test("writes and answers read back as they were written: methods, paths with queries, fields in order (a name twice too), bodies empty or not")
    func roundTrip() throws {
        let writes = [
            ForwardedWrites.Write(
                method: .post, path: "/announcements",
                fields: [.authorization: "Bearer alice-secret", .contentType: "application/json", .idempotencyKey: "k-1"],
                body: ByteBuffer(string: #"{"title":"Ünïcode ✓"}"#)
            ),
            ForwardedWrites.Write(
                method: .delete, path: "/v2/announcements/7?x=1",
                fields: [.ifMatch: "\"3\"", .ifMatch: "\"4\""], body: ByteBuffer()
            ),
        ]
        let read = try ForwardedWrites.writes(in: ForwardedWrites.encode(writes))
        #expect(read.count == 2)
        for (sent, got) in zip(writes, read) {
            #expect(got.method == sent.method && got.path == sent.path && got.fields == sent.fields && got.body == sent.body)
        }
        let answers = [
            ForwardedWrites.Answer(status: .created, fields: [.location: "/announcements/3", .logSeq: "3"], body: ByteBuffer(string: "{}")),
            ForwardedWrites.Answer(status: .preconditionFailed, fields: [:], body: ByteBuffer()),
        ]
        let back = try ForwardedWrites.answers(in: ForwardedWrites.encode(answers))
        #expect(back.map(\.status) == [.created, .preconditionFailed])
        #expect(back.map(\.fields) == answers.map(\.fields) && back.map(\.body) == answers.map(\.body))
    }

    @Test("bytes that are not writes are refused, saying what is wrong and where", arguments: [
        ([], "the body is empty"),
        ([2, 0, 0], "version 2"),
        ([1, 0], "the number of items is missing"),
        ([1, 0, 33], "33 items, more than the 32"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f], "write 1's method is cut off"),
        ([1, 0, 1, 0, 0, 0, 1, 0x20], "write 1's method ` ` is not a method"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f, 0x53, 0x54, 0, 0, 0, 1, 0x61], "write 1's path does not start with /"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f, 0x53, 0x54, 0, 0, 0, 1, 0xff], "write 1's path is not UTF-8"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f, 0x53, 0x54, 0, 0, 0, 1, 0x2f, 0, 1, 0, 0, 0, 1, 0x20], "write 1's field name ` ` is not a token"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f, 0x53, 0x54, 0, 0, 0, 1, 0x2f, 0, 0, 0, 0, 0, 9], "write 1's body is cut off"),
        ([1, 0, 0, 7], "1 bytes after the last item"),
        ([1, 0, 1, 0, 0, 0, 4, 0x50, 0x4f, 0x53, 0x54, 0, 0, 0, 1, 0x2f, 0, 101], "write 1 has 101 fields, more than the 100 a request may have"),
    ] as [([UInt8], String)])
    func malformed(bytes: [UInt8], message: String) {
        #expect {
            _ = try ForwardedWrites.writes(in: ByteBuffer(bytes: bytes))
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("a field larger than a request's head may hold is refused")
    func largeField() {
        let write = ForwardedWrites.Write(method: .post, path: "/announcements", fields: [.authorization: String(repeating: "x", count: 20_000)], body: ByteBuffer())
        #expect {
            _ = try ForwardedWrites.writes(in: ForwardedWrites.encode([write]))
        } throws: { error in
            "\(error)".contains("larger than a request's head may be")
        }
    }

    @Test("an answer's status must be one")
    func badStatus() {
        #expect(throws: ForwardedWrites.Malformed.self) { _ = try ForwardedWrites.answers(in: ByteBuffer(bytes: [1, 0, 1, 0x03, 0xe8, 0, 0, 0, 0, 0, 0])) }
        #expect(throws: Never.self) { _ = try ForwardedWrites.answers(in: ByteBuffer(bytes: [1, 0, 1, 0, 200, 0, 0, 0, 0, 0, 0])) }
    }

    @Test("a node takes from another the API's writes only: not an erasure, a web form's post, a read, nor this route", arguments: [
        ("POST", "/announcements", true), ("POST", "/v2/announcements", true), ("PUT", "/announcements/3", true),
        ("PATCH", "/v3/announcements/3?x=1", true), ("DELETE", "/v1/announcements/3", true),
        ("POST", "/announcements/3/erase", false), ("GET", "/announcements", false), ("POST", "/_nodes/writes", false),
        ("POST", "/web/announcements", false), ("POST", "/v9/announcements", false), ("DELETE", "/", false),
        ("PUT", "/announcements/3/erase/", false), ("POST", "/announcements/", true), ("PUT", "//v1//announcements/3", true),
    ] as [(String, String, Bool)])
    func forwardable(method: String, path: String, taken: Bool) throws {
        #expect(ForwardedWritesRoute.isForwardable(try #require(HTTPRequest.Method(method)), path) == taken)
    }
}
