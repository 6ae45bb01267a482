import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct JSONFieldNamesTests {
    func repeated(_ json: String) -> String? {
        Array(json.utf8).withUnsafeBytes(JSONFieldNames.firstRepeated)
    }

    @Test("finds the first field an object names twice, after decoding escapes")
    func repeatedNames() {
        #expect(repeated(#"{"title":"a","title":"b"}"#) == "title")
        #expect(repeated(#" { "a" : 1 , "b":{"a":2}, "\u0062" : [1,{"b":3}] } "#) == "b")
        #expect(repeated(#"{"title":"a","body":null}"#) == nil)
        #expect(repeated(#"{"a":{"x":1,"x":2}}"#) == nil, "only the top level")
        #expect(repeated(#"{}"#) == nil)
        #expect(repeated(#"[1,1]"#) == nil)
        #expect(repeated(#"{"a":1,"a""#) == nil, "not well formed")
    }
}
