import Testing
@testable import AnnouncementsHTTP

@Suite struct APIVersionTests {
    @Test("Accept-Version: each version in both spellings, between spaces or tabs; anything else is none")
    func header() {
        for (value, version) in [("1", APIVersion.v1), ("1.0", .v1), ("2", .v2), ("2.0", .v2), (" 2.0", .v2), ("1.0  ", .v1), ("\t2\t", .v2), (" \t1 ", .v1), ("3", .v3), ("3.0", .v3), (" 3.0\t", .v3)] {
            #expect(APIVersion(header: value) == version, "\(value.debugDescription)")
        }
        for value in ["", " ", "\t", "4.0", "4", "3.00", "2.00", "02", "2.", ".0", "v2", "2.0x", "2 .0", "1,2", "２.0", "1.0\n"] {
            #expect(APIVersion(header: value) == nil, "\(value.debugDescription)")
        }
    }
}
