import Foundation
import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// A write's JSON body, read by the log's scanner instead of Foundation's `JSONSerialization`.
@Suite struct WriteFieldsTests {
    private func read(_ json: String) throws(WriteFields.Problem) -> WriteFields {
        let bytes = Array(json.utf8)
        return try bytes.withUnsafeBytes { buffer in
            Result { () throws(WriteFields.Problem) in try WriteFields.read(buffer) }
        }.get()
    }

    private func problem(_ json: String) -> WriteFields.Problem? {
        do throws(WriteFields.Problem) {
            _ = try read(json)
            return nil
        } catch {
            return error
        }
    }

    @Test("the title is a String and the body JSONText in the store's one escaping, however the request spelled it")
    func fields() throws {
        let fields = try read(#" { "body" : "caf\u00e9 <a href=\"/x\">\/</a>\n" , "title":"Caf\u00e9 \ud83d\ude00" } "#)
        guard case .value(let title) = fields.title, case .value(let body) = fields.body else {
            Issue.record("expected both fields")
            return
        }
        #expect(title == "Café 😀")
        #expect(body == JSONText("café <a href=\"/x\">/</a>\n"))
        #expect(body.string == "café <a href=\"/x\">/</a>\n")
    }

    @Test("absent, null and wrongly typed fields are told apart")
    func kinds() throws {
        let empty = try read("{}")
        guard case .absent = empty.title, case .absent = empty.body else { Issue.record("expected absent fields"); return }
        let nulls = try read(#"{"title":null,"body":null}"#)
        guard case .null = nulls.title, case .null = nulls.body else { Issue.record("expected nulls"); return }
        let wrong = try read(#"{"title":[1,{"a":true}],"body":1.5e3}"#)
        guard case .wrongType = wrong.title, case .wrongType = wrong.body else { Issue.record("expected wrong types"); return }
    }

    @Test("what is wrong comes in order: not JSON (with its column), not an object, a repeated field, an unknown one")
    func problems() {
        #expect(problem(#"{"title":"x""#) == .notJSON("invalid JSON at column 13: expected ',' or '}' in an object"))
        #expect(problem(#"{"zzz":1,"title":"x"} x"#) == .notJSON("invalid JSON at column 23: unexpected characters after the value"))
        #expect(problem("") == .notJSON("invalid JSON at column 1: expected a value"))
        #expect(problem(#"["title"]"#) == .notObject)
        #expect(problem(#" "title" "#) == .notObject)
        #expect(problem(#"{"t\u0069tle":"a","title":"b","zzz":1}"#) == .repeated("title"))
        #expect(problem(#"{"title":"a","zeta":1,"alpha":{"b":[]}}"#) == .unknown("alpha"))
        #expect(problem(#"{"title":"a","alpha":1,}"#) == .notJSON("invalid JSON at column 24: expected a string"))
        // A text of several lines names the line; a column counts characters, not bytes.
        #expect(problem("{\n  \"title\": \"a\",\n  \"body\": \"b\",\n}") == .notJSON("invalid JSON at line 4, column 1: expected a string"))
        #expect(problem(#"{"title":"éééé",}"#) == .notJSON("invalid JSON at column 17: expected a string"))
    }

    /// Whether Foundation's parser takes `json` as JSON.
    private func foundationAccepts(_ json: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed])) != nil
    }

    @Test("a body of half a million fields is read in linear time: a repeat and the first unknown name found", .timeLimit(.minutes(1)))
    func manyFields() {
        // About 6.5 MB, about the most a write's body may be at the default limits. Comparing each
        // name with every one before it took 42 s for 200,000 names in a release build.
        let names = (0..<500_000).map { "\"f\(String($0 + 1_000_000))\":0" }
        #expect(problem("{" + names.joined(separator: ",") + "}") == .unknown("f1000000"))
        #expect(problem("{" + names.joined(separator: ",") + #","f1499999":1}"#) == .repeated("f1499999"))
    }

    @Test("JSON or not: the same verdict as Foundation's parser on the cases that tell parsers apart")
    func sameVerdictAsFoundation() {
        let cases: [String] = [
            #"{}"#, #"{"title":"x"}"#, " \t\r\n{\"title\" :\"x\" }\n", #"{'title':'x'}"#,
            #"{"title":01}"#, #"{"title":-0}"#, #"{"title":1e5}"#, #"{"title":1.}"#, #"{"title":.5}"#, #"{"title":+1}"#,
            #"{"title":NaN}"#, #"{"title":true}"#, #"{"title":tru}"#, #"{"title":nul}"#,
            #"{"title":"\x"}"#, #"{"title":"\u12"}"#, #"{"title":"\u00e9\n\/"}"#, "{\"title\":\"a\tb\"}",
            #"{"title":"x"}}"#, #"{"title" "x"}"#, #"{"title":"x""body":"y"}"#, #"[]"#, #"[1,"a",null]"#, #"1"#, #""x""#,
            #"null"#, "", " ", #"{"a":{"b":{"c":[[[]]]}}}"#,
        ]
        for json in cases {
            let bytes = Array(json.utf8)
            let ours: Bool
            if case .notJSON? = problem(json) { ours = false } else { ours = true }
            #expect(ours == foundationAccepts(bytes), "\(json.debugDescription)")
        }
        // Where they differ: Foundation takes trailing commas, which RFC 8259 does not allow.
        for json in [#"{"title":"x",}"#, #"{"title":[1,2,]}"#] {
            #expect(problem(json) != nil && foundationAccepts(Array(json.utf8)), "\(json.debugDescription)")
        }
    }
}
