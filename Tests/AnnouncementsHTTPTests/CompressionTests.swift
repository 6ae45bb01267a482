import AnnouncementsDomain
import AnnouncementsStore
import NIOCore
import Synchronization
import Testing
@testable import AnnouncementsHTTP

@Suite struct CompressionTests {
    // MARK: - Accept-Encoding

    @Test("Accept-Encoding weights: qvalues in thousandths, malformed elements left out, the first weight of a name counts")
    func acceptEncodingWeights() {
        let parsed = AcceptEncoding("gzip;q=0.5, deflate ;q=1.000,identity;q=0, br;q=1.5, zstd;q=0.1234, gzip;q=1, *;q=0.25")
        #expect(parsed.weights == ["gzip": 500, "deflate": 1000, "identity": 0, "*": 250])
        #expect(parsed.weight(of: .gzip) == 500)
        #expect(parsed.weight(ofName: "br") == 250, "an unnamed coding weighs what * does")
        #expect(AcceptEncoding("gzip").weight(ofName: "identity") == nil)
        #expect(AcceptEncoding("x-gzip;q=0.3").weight(of: .gzip) == 300)
    }

    @Test("qvalues: 0 to 1 with at most three decimals", arguments: [
        ("0", 0), ("0.", 0), ("0.5", 500), ("0.05", 50), ("0.001", 1), ("1", 1000), ("1.", 1000), ("1.000", 1000),
        ("1.001", nil), ("2", nil), ("0.0001", nil), ("-0", nil), (".5", nil), ("0.5x", nil), ("", nil),
    ] as [(String, Int?)])
    func qvalues(text: String, thousandths: Int?) {
        #expect(WeightedChoices.qvalue(Substring(text)) == thousandths)
    }

    @Test("the preferred coding over several Accept-Encoding fields, which count as one list")
    func severalFields() {
        #expect(ContentCoding.preferred(acceptEncoding: ["gzip;q=0", "deflate"]) == .deflate)
        #expect(ContentCoding.preferred(acceptEncoding: []) == nil)
    }

    // MARK: - zlib

    @Test("gzip and deflate round trips, of nothing and of megabytes")
    func roundTrips() throws {
        var large = ByteBuffer()
        for line in 0..<40_000 { large.writeString("{\"seq\":\(line),\"title\":\"café \(line % 97)\"}\n") }
        for coding in ContentCoding.allCases {
            for input in [ByteBuffer(), ByteBuffer(string: "x"), large] {
                let compressed = try Zlib.compress(input, as: coding)
                #expect(try Zlib.decompress(compressed, as: coding) == input, "\(coding), \(input.readableBytes) bytes")
            }
            #expect(try Zlib.compress(large, as: coding).readableBytes * 5 < large.readableBytes)
        }
    }

    @Test("reading back fails with zlib's reason: another format, a cut stream, garbage, or past the limit")
    func decompressFailures() throws {
        let text = ByteBuffer(string: String(repeating: "announcement ", count: 1000))
        let gzipped = try Zlib.compress(text, as: .gzip)
        #expect(throws: Zlib.Failure.self) { try Zlib.decompress(gzipped, as: .deflate) }
        #expect(throws: Zlib.Failure.self) { try Zlib.decompress(gzipped.getSlice(at: 0, length: gzipped.readableBytes - 10) ?? ByteBuffer(), as: .gzip) }
        #expect { try Zlib.decompress(ByteBuffer(string: "not compressed at all"), as: .gzip) } throws: { error in
            guard let failure = error as? Zlib.Failure else { return false }
            return failure.description.hasPrefix("zlib error") && !failure.message.isEmpty
        }
        #expect { try Zlib.decompress(gzipped, as: .gzip, limit: 100) } throws: { error in
            (error as? Zlib.Failure)?.message.contains("more than 100 bytes") == true
        }
    }

    // MARK: - The cache

    /// A compressor that counts its calls, around zlib (or failing, with `fails`).
    private final class Counting: Sendable {
        let calls = Mutex(0)
        let fails: Bool

        init(fails: Bool = false) {
            self.fails = fails
        }

        var compressor: Compressor {
            Compressor { [self] plain, coding in
                calls.withLock { $0 += 1 }
                return fails ? nil : Compressor.zlib.compress(plain, coding)
            }
        }

        var count: Int { calls.withLock { $0 } }
    }

    private static let key = RepresentationCache.PageKey(version: .v1, media: .json, query: PageQuery())
    private static let large = ByteBuffer(string: String(repeating: #"{"id":1,"title":"An update","body":"<p>Hello</p>"},"#, count: 100))

    @Test("a page is encoded once and compressed once per coding and log position: the next requests share the buffers")
    func pageCompressedOncePerChange() throws {
        let counting = Counting()
        let cache = RepresentationCache(compressor: counting.compressor)
        let encodes = Mutex(0)
        func page(_ seq: Int, _ coding: ContentCoding?) -> CodedBody {
            cache.page(Self.key, seq: seq, coding: coding, tag: { "\"page-\(seq)\"" }) {
                encodes.withLock { $0 += 1 }
                return (Self.large, .init(total: 100, count: 10))
            }.0
        }
        let first = page(1, .gzip)
        #expect(first.coding == .gzip)
        #expect(try Zlib.decompress(first.bytes, as: .gzip) == Self.large)
        #expect(page(1, .gzip).bytes == first.bytes)
        #expect(page(1, nil).bytes == Self.large)
        #expect((counting.count, encodes.withLock { $0 }) == (1, 1), "served three times, compressed and encoded once")
        #expect(page(1, .deflate).coding == .deflate)
        #expect(page(1, .deflate).coding == .deflate)
        #expect((counting.count, encodes.withLock { $0 }) == (2, 1), "deflate once more, from the encoded bytes")
        // A write moves the log on: the page is encoded and compressed again, once.
        #expect(page(2, .gzip).coding == .gzip)
        #expect(page(2, .gzip).coding == .gzip)
        #expect((counting.count, encodes.withLock { $0 }) == (3, 2))
    }

    @Test("an announcement is compressed once per coding and revision, and its ETag made once per revision")
    func itemCompressedOncePerRevision() {
        let counting = Counting()
        let cache = RepresentationCache(compressor: counting.compressor)
        var announcement = Announcement(id: 7, title: "Long", body: String(repeating: "<p>Words</p>", count: 200), revision: 1, createdBy: "alice", createdAt: .init(millisecondsSince1970: 0), updatedAt: .init(millisecondsSince1970: 0))
        var tags = 0
        func item(_ coding: ContentCoding? = .gzip) -> CodedBody {
            let (body, tag) = cache.item(announcement, seq: 1, media: .json, detailed: false, coding: coding, tag: { tags += 1; return "\"7-\(announcement.revision)-tag\"" }) { ReadRoutes.encode(announcement, .v1) }
            #expect(tag == "\"7-\(announcement.revision)-tag\"")
            return body
        }
        #expect(item().coding == .gzip)
        #expect(item().coding == .gzip)
        #expect(item(nil).coding == nil)
        #expect(counting.count == 1 && tags == 1)
        announcement.revision = 2
        announcement.title = "Longer"
        #expect(item().coding == .gzip)
        #expect(counting.count == 2 && tags == 2)
    }

    @Test("the cache holds at most its budget of bytes: past it, it starts over; a page larger than the budget is served, not kept")
    func byteBudget() {
        let size = Self.large.capacity  // what a page counts: the memory its buffer holds
        let cache = RepresentationCache(byteLimit: 3 * size + size / 2)
        let encodes = Mutex([Int: Int]())
        func page(_ max: Int, _ bytes: ByteBuffer = Self.large) {
            var query = PageQuery()
            query.limit = max
            let key = RepresentationCache.PageKey(version: .v1, media: .json, query: query)
            _ = cache.page(key, seq: 1, coding: nil, tag: { "\"page-\(max)\"" }) {
                encodes.withLock { $0[max, default: 0] += 1 }
                return (bytes, .init(total: 100, count: max))
            }
        }
        for max in 1...3 { page(max) }
        for max in 1...3 { page(max) }
        #expect(encodes.withLock { $0 } == [1: 1, 2: 1, 3: 1], "three pages fit: each encoded once")
        page(4)  // a fourth does not fit: the cache starts over with it
        page(1)
        page(4)
        #expect(encodes.withLock { $0 } == [1: 2, 2: 1, 3: 1, 4: 1])
        let huge = ByteBuffer(repeating: UInt8(ascii: "x"), count: 4 * size)
        page(5, huge)
        page(5, huge)
        #expect(encodes.withLock { $0[5] } == 2, "larger than the whole budget: never kept")
        page(4)
        #expect(encodes.withLock { $0[4] } == 1, "and what was kept stays")

        var announcement = Announcement(id: 1, title: "Long", body: String(repeating: "x", count: 5000), revision: 1, createdBy: "alice", createdAt: .init(millisecondsSince1970: 0), updatedAt: .init(millisecondsSince1970: 0))
        let itemSize = ReadRoutes.encode(announcement, .v1).capacity
        let itemCache = RepresentationCache(byteLimit: 3 * itemSize + itemSize / 2)
        let items = Mutex(0)
        for id in [1, 2, 3, 4, 1] {
            announcement.id = id
            _ = itemCache.item(announcement, seq: 1, media: .json, detailed: false, coding: nil, tag: { "\"tag\"" }) { items.withLock { $0 += 1 }; return ReadRoutes.encode(announcement, .v1) }
        }
        #expect(items.withLock { $0 } == 5, "the fourth announcement made the items start over, so the first was encoded again")
        _ = itemCache.item(announcement, seq: 1, media: .json, detailed: false, coding: nil, tag: { "\"tag\"" }) { items.withLock { $0 += 1 }; return ReadRoutes.encode(announcement, .v1) }
        #expect(items.withLock { $0 } == 5)
    }

    @Test("a cached page counts the memory its buffers hold, compressed ones included, not only their readable bytes")
    func countsCapacity() {
        let cache = RepresentationCache()
        let first = cache.page(Self.key, seq: 1, coding: nil, tag: { "\"p\"" }) { (Self.large, .init(total: 100, count: 10)) }.0
        #expect(cache.pageBytes == first.bytes.capacity)
        let gzip = cache.page(Self.key, seq: 1, coding: .gzip, tag: { "\"p\"" }) { (Self.large, .init(total: 100, count: 10)) }.0
        #expect(gzip.coding == .gzip && gzip.bytes.capacity > gzip.bytes.readableBytes, "a compressed body's buffer is sized for the worst case")
        #expect(cache.pageBytes == first.bytes.capacity + gzip.bytes.capacity)
    }

    @Test("under 1 KB nothing is compressed; a failed compression sends the plain bytes")
    func smallOrFailed() {
        let counting = Counting()
        let cache = RepresentationCache(compressor: counting.compressor)
        let small = ByteBuffer(string: String(repeating: "a", count: ContentCoding.minimumBytes - 1))
        let body = cache.page(Self.key, seq: 1, coding: .gzip, tag: { "\"small\"" }) { (small, .init(total: 1, count: 1)) }.0
        #expect(body.coding == nil && body.bytes == small)
        #expect(counting.count == 0)

        let failing = Counting(fails: true)
        let other = RepresentationCache(compressor: failing.compressor)
        let failed = other.page(Self.key, seq: 1, coding: .gzip, tag: { "\"large\"" }) { (Self.large, .init(total: 1, count: 1)) }.0
        #expect(failed.coding == nil && failed.bytes == Self.large)
        #expect(failing.count == 1)
    }
}
