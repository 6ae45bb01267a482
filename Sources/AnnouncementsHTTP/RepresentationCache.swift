import AnnouncementsCore
import NIOCore
import Synchronization

/// Encoded responses, so that an unchanged resource is encoded once and then served as bytes.
///
/// List pages are kept for one log position: the first request after a write re-encodes, the
/// rest share the buffer. Single announcements are kept by revision, across writes to others.
/// Both are bounded; when full they start over.
final class RepresentationCache: Sendable {
    struct PageKey: Hashable {
        var version: APIVersion
        var media: MediaType
        var query: PageQuery
    }

    struct ItemKey: Hashable {
        var id: Int
        var media: MediaType
    }

    private struct State {
        var seq = -1
        var pages: [PageKey: (ByteBuffer, total: Int)] = [:]
        var items: [ItemKey: (revision: Int, ByteBuffer)] = [:]
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int = 4096) {
        self.limit = limit
    }

    /// The page for `key` at log position `seq`, encoded by `encode` if it is not cached (a
    /// failure is not kept).
    func page<Failure: Error>(
        _ key: PageKey, seq: Int, encode: () throws(Failure) -> (ByteBuffer, total: Int)
    ) throws(Failure) -> (ByteBuffer, total: Int) {
        if let cached = state.withLock({ $0.seq == seq ? $0.pages[key] : nil }) { return cached }
        let encoded = try encode()
        state.withLock { state in
            if state.seq != seq {
                guard seq > state.seq else { return }  // a reader on an older snapshot: don't cache
                state.seq = seq
                state.pages = [:]
            }
            if state.pages.count >= limit { state.pages = [:] }
            state.pages[key] = encoded
        }
        return encoded
    }

    /// The announcement's representation at its revision, encoded by `encode` if it is not cached
    /// (a failure is not kept).
    func item<Failure: Error>(
        _ announcement: Announcement, media: MediaType, encode: () throws(Failure) -> ByteBuffer
    ) throws(Failure) -> ByteBuffer {
        let key = ItemKey(id: announcement.id, media: media)
        if let cached = state.withLock({ $0.items[key] }), cached.revision == announcement.revision {
            return cached.1
        }
        let encoded = try encode()
        state.withLock { state in
            if state.items.count >= limit { state.items = [:] }
            if (state.items[key]?.revision ?? -1) < announcement.revision {
                state.items[key] = (announcement.revision, encoded)
            }
        }
        return encoded
    }
}
