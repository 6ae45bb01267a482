import AnnouncementsDomain
import NIOCore
import Synchronization

/// Encoded responses, so that an unchanged resource is encoded once and then served as bytes;
/// and compressed once per content coding, the first time a client asks for that coding.
///
/// List pages are kept for one log position: the first request after a write re-encodes (and
/// re-compresses), the rest share the buffers. Single announcements are kept by revision, across
/// writes to others. Both are bounded; when full they start over.
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

    /// A representation's bytes, and the compressed forms of them made so far.
    private struct Entry {
        var plain: ByteBuffer
        var coded: [ContentCoding: CodedBody] = [:]

        /// The body for a client that takes `coding`; nil when it is still to be compressed.
        func body(_ coding: ContentCoding?) -> CodedBody? {
            guard let coding, plain.readableBytes >= ContentCoding.minimumBytes else { return CodedBody(plain: plain) }
            return coded[coding]
        }

        mutating func keep(_ body: CodedBody, for coding: ContentCoding?) {
            if let coding, plain.readableBytes >= ContentCoding.minimumBytes { coded[coding] = body }
        }
    }

    private struct State {
        var seq = -1
        var pages: [PageKey: (entry: Entry, total: Int, tag: String)] = [:]
        var items: [ItemKey: (revision: Int, entry: Entry)] = [:]
    }

    private let state = Mutex(State())
    private let limit: Int
    private let compressor: Compressor

    init(limit: Int = 4096, compressor: Compressor = .zlib) {
        self.limit = limit
        self.compressor = compressor
    }

    /// The page for `key` at log position `seq` for a client that takes `coding`, encoded by
    /// `encode` and compressed if it is not cached (a failure is not kept), with its plain ETag,
    /// made by `tag` once per page and position (not per request: it has seven parts).
    func page<Failure: Error>(
        _ key: PageKey, seq: Int, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> (ByteBuffer, total: Int)
    ) throws(Failure) -> (CodedBody, total: Int, tag: String) {
        let cached = state.withLock { $0.seq == seq ? $0.pages[key] : nil }
        if let cached, let body = cached.entry.body(coding) { return (body, cached.total, cached.tag) }
        // Cached but not in this coding yet: compress the cached bytes, without encoding again.
        let (plain, total, plainTag) = if let cached { (cached.entry.plain, cached.total, cached.tag) } else {
            try { () throws(Failure) in let (plain, total) = try encode(); return (plain, total, tag()) }()
        }
        let body = CodedBody(plain, compressedWith: coding, by: compressor)
        state.withLock { state in
            if state.seq != seq {
                guard seq > state.seq else { return }  // a reader on an older snapshot: don't cache
                state.seq = seq
                state.pages = [:]
            }
            if state.pages[key] == nil, state.pages.count >= limit { state.pages = [:] }
            state.pages[key, default: (Entry(plain: plain), total, plainTag)].entry.keep(body, for: coding)
        }
        return (body, total, plainTag)
    }

    /// The announcement's representation at its revision for a client that takes `coding`,
    /// encoded by `encode` and compressed if it is not cached (a failure is not kept).
    func item<Failure: Error>(
        _ announcement: Announcement, media: MediaType, coding: ContentCoding?, encode: () throws(Failure) -> ByteBuffer
    ) throws(Failure) -> CodedBody {
        let key = ItemKey(id: announcement.id, media: media)
        let cached = state.withLock { $0.items[key] }.flatMap { $0.revision == announcement.revision ? $0.entry : nil }
        if let cached, let body = cached.body(coding) { return body }
        let plain = if let cached { cached.plain } else { try encode() }
        let body = CodedBody(plain, compressedWith: coding, by: compressor)
        state.withLock { state in
            let kept = state.items[key]?.revision ?? -1
            guard kept <= announcement.revision else { return }  // a newer revision is cached: keep it
            if kept < announcement.revision {
                if state.items[key] == nil, state.items.count >= limit { state.items = [:] }
                state.items[key] = (announcement.revision, Entry(plain: plain))
            }
            state.items[key]?.entry.keep(body, for: coding)
        }
        return body
    }
}
