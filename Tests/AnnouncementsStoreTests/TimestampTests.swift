import Testing
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

@Suite struct TimestampTests {
    @Test("formats as RFC 3339 in UTC with milliseconds")
    func formats() {
        #expect(t0.description == "2026-11-21T09:30:00.000Z")
        #expect(Timestamp(millisecondsSince1970: 0).description == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: 951_782_400_123).description == "2000-02-29T00:00:00.123Z")
    }

    @Test("parses what it formats, and other RFC 3339 forms", arguments: [
        ("2026-11-21T09:30:00.000Z", 1_795_253_400_000),
        ("2026-11-21T09:30:00Z", 1_795_253_400_000),
        ("2026-11-21T10:30:00.5+01:00", 1_795_253_400_500),
        ("2026-11-21T09:30:00.123456Z", 1_795_253_400_123),
        ("2000-02-29T00:00:00.123Z", 951_782_400_123),
    ] as [(String, Int64)])
    func parses(text: String, milliseconds: Int64) {
        #expect(Timestamp(rfc3339: text)?.millisecondsSince1970 == milliseconds)
    }

    @Test("rejects malformed times", arguments: [
        "", "2026-11-21", "2026-11-21T09:30:00", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-21T25:00:00Z", "2026-11-21T09:30:00.Z", "2026-11-21T09:30:00Zjunk", "yesterday",
        // Valid RFC 3339, but out of the years the log writes once in UTC.
        "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-01:00",
    ])
    func rejects(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test("an instant outside the years 0000 to 9999 is written with an expanded, signed year, never a trap")
    func writesExpandedYears() {
        let day: Int64 = 86_400_000
        #expect(Timestamp(millisecondsSince1970: Timestamp.days(fromCivil: 0, 1, 1) * day - 60_000).description == "-0001-12-31T23:59:00.000Z")
        #expect(Timestamp(millisecondsSince1970: Timestamp.days(fromCivil: 10_000, 1, 1) * day).description == "+10000-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: Timestamp.days(fromCivil: 300_000, 1, 1) * day).description == "+300000-01-01T00:00:00.000Z")
        #expect(Timestamp(millisecondsSince1970: .max).description == "+292278994-08-17T07:12:55.807Z")
        #expect(Timestamp(millisecondsSince1970: .min).description == "-292275055-05-16T16:47:04.192Z")
    }

    @Test("a time moved by a time zone's minutes stays within the years the log writes, or is nil")
    func addingMinutes() throws {
        let first = try #require(Timestamp(rfc3339: "0000-01-01T00:00:00Z"))
        #expect(first.adding(minutes: -1) == nil)
        #expect(first.adding(minutes: 1)?.description == "0000-01-01T00:01:00.000Z")
        let last = try #require(Timestamp(rfc3339: "9999-12-31T23:59:00Z"))
        #expect(last.adding(minutes: 1) == nil)
        #expect(t0.adding(minutes: -60)?.description == "2026-11-21T08:30:00.000Z")
        #expect(t0.adding(minutes: .max) == nil && t0.adding(minutes: .min) == nil, "no overflow")
    }

    @Test("every time it parses, it can write: the first and last instants of the years 0000 to 9999 round trip")
    func edges() throws {
        for text in ["0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "0000-01-01T00:01:00+00:01", "9999-12-31T22:59:59.999-01:00"] {
            let time = try #require(Timestamp(rfc3339: text), "\(text)")
            #expect(Timestamp(rfc3339: time.description) == time)
        }
    }
}
