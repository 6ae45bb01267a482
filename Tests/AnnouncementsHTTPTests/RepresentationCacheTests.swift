import AnnouncementsDomain
import Dispatch
import Foundation
import NIOCore
import Synchronization
import Testing
@testable import AnnouncementsHTTP

/// Each thread's own copies of what it served (`RepresentationCache.threadsPage`, `threadsItem`):
/// found only at the log position they were made at, in buffers no other thread's copy shares.
@Suite struct RepresentationCacheTests {
    private static let key = RepresentationCache.PageKey(version: .v2, media: .json, query: PageQuery())
    private static let bytes = ByteBuffer(string: String(repeating: #"{"id":1,"title":"An update"},"#, count: 10))

    private static func page(_ cache: RepresentationCache, seq: Int, coding: ContentCoding? = nil, _ bytes: ByteBuffer = bytes) -> (CodedBody, RepresentationCache.PageExtent, tag: String) {
        cache.page(key, seq: seq, coding: coding, tag: { "\"list-2-\(seq)-a-long-enough-tag\"" }) { (bytes, .init(total: 10, count: 10)) }
    }

    /// The address of a buffer's storage.
    private static func storage(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    @Test("a page a thread served is its copy at that log position, in coding it was served in: the same bytes, ETag and extent, in a buffer of its own")
    func pageCopy() throws {
        let cache = RepresentationCache()
        #expect(cache.threadsPage(Self.key, seq: 1, coding: nil) == nil, "nothing served yet")
        let (served, _, tag) = Self.page(cache, seq: 1)
        let (copy, extent, copiedTag) = try #require(cache.threadsPage(Self.key, seq: 1, coding: nil))
        #expect(copy.bytes == served.bytes && copy.coding == nil)
        #expect(copiedTag == tag && extent.total == 10 && extent.count == 10)
        #expect(Self.storage(copy.bytes) != Self.storage(served.bytes), "its own buffer, not the shared entry's")
        #expect(cache.threadsPage(Self.key, seq: 1, coding: .gzip) == nil, "another coding is another representation")
        #expect(cache.threadsPage(Self.key, seq: 2, coding: nil) == nil, "a write moved the log on: the copy is not the state")
        var other = Self.key
        other.query.limit = 5
        #expect(cache.threadsPage(other, seq: 1, coding: nil) == nil)
    }

    @Test("the copies start over at the next log position, and a reader on an older one leaves them be")
    func nextPosition() throws {
        let cache = RepresentationCache()
        _ = Self.page(cache, seq: 2)
        _ = Self.page(cache, seq: 1)  // a reader that took the state before the write
        #expect(cache.threadsPage(Self.key, seq: 2, coding: nil) != nil)
        #expect(cache.threadsPage(Self.key, seq: 1, coding: nil) == nil)
        _ = Self.page(cache, seq: 3)
        #expect(cache.threadsPage(Self.key, seq: 3, coding: nil) != nil)
        #expect(cache.threadsPage(Self.key, seq: 2, coding: nil) == nil)
    }

    @Test("an announcement a thread served is its copy at that log position, by id, media and form")
    func itemCopy() throws {
        let cache = RepresentationCache()
        let announcement = Announcement(id: 7, title: "Long", body: String(repeating: "<p>Words</p>", count: 200), revision: 3, createdBy: "alice", createdAt: .init(millisecondsSince1970: 0), updatedAt: .init(millisecondsSince1970: 0))
        let key = RepresentationCache.ItemKey(id: 7, media: .json, detailed: false)
        #expect(cache.threadsItem(key, seq: 9, coding: .gzip) == nil)
        let (served, tag) = cache.item(announcement, seq: 9, media: .json, detailed: false, coding: .gzip, tag: { "\"7-3-tag\"" }) { ReadRoutes.encode(announcement, .v1) }
        #expect(served.coding == .gzip)
        let (copy, copiedTag) = try #require(cache.threadsItem(key, seq: 9, coding: .gzip))
        #expect(copy.bytes == served.bytes && copy.coding == .gzip && copiedTag == tag)
        #expect(Self.storage(copy.bytes) != Self.storage(served.bytes))
        #expect(cache.threadsItem(RepresentationCache.ItemKey(id: 7, media: .json, detailed: true), seq: 9, coding: .gzip) == nil, "v3's form is another")
        #expect(cache.threadsItem(key, seq: 10, coding: .gzip) == nil)
    }

    @Test("an erasure lets go of the erased announcement's representations, the pages and every thread's copies of older positions, and none of them is kept again; the others stay")
    func erasure() throws {
        let cache = RepresentationCache()
        func announcement(_ id: Int) -> Announcement {
            Announcement(id: id, title: "Phone number of R. Roe", body: "<p>555-0100</p>", revision: id, createdBy: "alice", createdAt: .init(millisecondsSince1970: 0), updatedAt: .init(millisecondsSince1970: 0))
        }
        func serve(_ id: Int, seq: Int) {
            _ = cache.item(announcement(id), seq: seq, media: .json, detailed: false, coding: nil, tag: { "\"\(id)-tag\"" }) { ReadRoutes.encode(announcement(id), .v1) }
        }
        let key = RepresentationCache.ItemKey(id: 7, media: .json, detailed: false)
        serve(7, seq: 9)
        serve(8, seq: 9)
        _ = Self.page(cache, seq: 9)
        #expect(cache.itemIDs == [7, 8] && cache.pageBytes > 0)
        #expect(cache.threadsItem(key, seq: 9, coding: nil) != nil && cache.threadsPage(Self.key, seq: 9, coding: nil) != nil)

        cache.forget(erased: [7], at: 10)
        #expect(cache.itemIDs == [8], "another announcement's stays")
        #expect(cache.pageBytes == 0)
        #expect(cache.threadsItem(key, seq: 9, coding: nil) == nil && cache.threadsPage(Self.key, seq: 9, coding: nil) == nil)
        // A reader still on the state before the erasure is served, and nothing of it is kept.
        serve(7, seq: 9)
        _ = Self.page(cache, seq: 9)
        #expect(cache.itemIDs == [8] && cache.pageBytes == 0)
        #expect(cache.threadsItem(key, seq: 9, coding: nil) == nil && cache.threadsPage(Self.key, seq: 9, coding: nil) == nil)
        // The state after it is kept as before.
        _ = Self.page(cache, seq: 10)
        #expect(cache.pageBytes > 0 && cache.threadsPage(Self.key, seq: 10, coding: nil) != nil)
    }

    @Test("a thread's copies are bounded: past its entries or bytes they start over; one larger than its bytes is not copied")
    func copiesBounded() throws {
        let cache = RepresentationCache(copyLimit: 2, copyByteLimit: 4 * Self.bytes.readableBytes)
        func serve(_ limit: Int, _ bytes: ByteBuffer = Self.bytes) {
            var key = Self.key
            key.query.limit = limit
            _ = cache.page(key, seq: 1, coding: nil, tag: { "\"t\"" }) { (bytes, .init(total: 10, count: limit)) }
        }
        func copied(_ limit: Int) -> Bool {
            var key = Self.key
            key.query.limit = limit
            return cache.threadsPage(key, seq: 1, coding: nil) != nil
        }
        serve(1)
        serve(2)
        #expect(copied(1) && copied(2))
        serve(3)
        #expect(!copied(1) && !copied(2) && copied(3), "a third entry: they start over with it")
        serve(4, ByteBuffer(repeating: UInt8(ascii: "x"), count: 5 * Self.bytes.readableBytes))
        #expect(!copied(4) && copied(3), "larger than the thread's bytes: served, not copied, and the rest stays")
    }

    @Test("threads keep copies of their own: another thread finds none of this one's (unless it shares its slot) until it serves the page itself")
    func perThread() throws {
        let cache = RepresentationCache(threadSlots: 64)
        _ = Self.page(cache, seq: 1)
        let here = ThreadSlots<Int>.index(ofThread: ThreadSlots<Int>.threadID, among: 64)
        let seen = Mutex<(sameSlot: Bool, before: Bool, after: Bool)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let sameSlot = ThreadSlots<Int>.index(ofThread: ThreadSlots<Int>.threadID, among: 64) == here
            let before = cache.threadsPage(Self.key, seq: 1, coding: nil) != nil
            _ = Self.page(cache, seq: 1)
            let after = cache.threadsPage(Self.key, seq: 1, coding: nil) != nil
            seen.withLock { $0 = (sameSlot, before, after) }
            done.signal()
        }
        thread.start()
        done.wait()
        let (sameSlot, before, after) = try #require(seen.withLock { $0 })
        #expect(before == sameSlot, "another slot holds no copy of what this thread served")
        #expect(after)
    }
}
