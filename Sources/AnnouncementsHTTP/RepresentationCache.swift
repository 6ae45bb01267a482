import AnnouncementsDomain
import NIOCore
import Synchronization

/// Encoded responses, so that an unchanged resource is encoded once and then served as bytes;
/// and compressed once per content coding, the first time a client asks for that coding.
///
/// List pages are kept for one log position: the first request after a write re-encodes (and
/// re-compresses), the rest share the buffers. Single announcements are kept by revision, across
/// writes to others. Both are bounded, in entries and in bytes (pages of large announcements are
/// large: a client asking for many of them must not fill the memory); when full they start over,
/// and a representation larger than the whole budget is served without being kept.
final class RepresentationCache: Sendable {
    struct PageKey: Hashable {
        var version: APIVersion
        var media: MediaType
        var query: PageQuery
    }

    /// What a page holds besides its bytes: how many announcements the whole list has, and how
    /// many of them this page holds (fewer than asked past `ReadRoutes.pageByteLimit`).
    struct PageExtent: Sendable {
        var total: Int
        var count: Int
    }

    struct ItemKey: Hashable {
        var id: Int
        var media: MediaType
        /// Whether it is v3's representation (v1 and v2 share the other).
        var detailed: Bool
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

        /// The memory it holds: each buffer's capacity, not its readable bytes (a compressed body
        /// sits in a buffer sized for the worst case, about as large as the plain one); the plain
        /// and each compressed form (a coding that did not pay keeps the plain buffer: counted once).
        var bytes: Int {
            coded.values.reduce(plain.capacity) { $0 + ($1.coding == nil ? 0 : $1.bytes.capacity) }
        }
    }

    /// Entries by key, bounded in number and in bytes.
    private struct Bounded<Key: Hashable, Value> {
        private(set) var entries: [Key: Value] = [:]
        private var sizes: [Key: Int] = [:]
        /// The bytes counted against the budget.
        private(set) var bytes = 0

        /// Stores `value` (of `size` bytes) under `key`; when that would pass `limit` entries or
        /// `byteLimit` bytes, starts over first, with `value` made again by `rebuild` from nothing
        /// (what it had from the old entry goes too), unless even that is larger than `byteLimit`:
        /// then nothing changes.
        mutating func store(_ key: Key, _ value: Value, size: Int, limit: Int, byteLimit: Int, rebuild: () -> (Value, size: Int)) {
            var (value, size) = (value, size)
            let fits = (entries[key] != nil || entries.count < limit) && bytes - (sizes[key] ?? 0) + size <= byteLimit
            if !fits {
                (value, size) = rebuild()
                // Larger than the whole budget on its own: served, not kept (and what is kept stays).
                guard size <= byteLimit else { return }
                removeAll()
            }
            bytes += size - (sizes[key] ?? 0)
            entries[key] = value
            sizes[key] = size
        }

        mutating func removeAll() {
            entries = [:]
            sizes = [:]
            bytes = 0
        }
    }

    private struct State {
        var seq = -1
        var pages = Bounded<PageKey, (entry: Entry, extent: PageExtent, tag: String)>()
        var items = Bounded<ItemKey, (revision: Int, entry: Entry, tag: String)>()
    }

    private let state = Mutex(State())
    private let limit: Int
    private let byteLimit: Int
    private let compressor: Compressor

    /// The bytes the cached pages count against their budget (for tests).
    var pageBytes: Int { state.withLock { $0.pages.bytes } }

    /// At most `limit` pages and `limit` announcements, each kind at most `byteLimit` bytes.
    init(limit: Int = 4096, byteLimit: Int = 64 << 20, compressor: Compressor = .zlib) {
        self.limit = limit
        self.byteLimit = byteLimit
        self.compressor = compressor
    }

    /// The page for `key` at log position `seq` for a client that takes `coding`, encoded by
    /// `encode` and compressed if it is not cached (a failure is not kept), with its plain ETag,
    /// made by `tag` once per page and position (not per request: it has seven parts).
    func page<Failure: Error>(
        _ key: PageKey, seq: Int, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> (ByteBuffer, PageExtent)
    ) throws(Failure) -> (CodedBody, PageExtent, tag: String) {
        let cached = state.withLock { $0.seq == seq ? $0.pages.entries[key] : nil }
        if let cached, let body = cached.entry.body(coding) { return (body, cached.extent, cached.tag) }
        // Cached but not in this coding yet: compress the cached bytes, without encoding again.
        let (plain, extent, plainTag) = if let cached { (cached.entry.plain, cached.extent, cached.tag) } else {
            try { () throws(Failure) in let (plain, extent) = try encode(); return (plain, extent, tag()) }()
        }
        let body = CodedBody(plain, compressedWith: coding, by: compressor)
        state.withLock { state in
            if state.seq != seq {
                guard seq > state.seq else { return }  // a reader on an older snapshot: don't cache
                state.seq = seq
                state.pages.removeAll()
            }
            func page(from entry: Entry?) -> ((entry: Entry, extent: PageExtent, tag: String), size: Int) {
                var entry = entry ?? Entry(plain: plain)
                entry.keep(body, for: coding)
                return ((entry, extent, plainTag), entry.bytes)
            }
            let (kept, size) = page(from: state.pages.entries[key]?.entry)
            state.pages.store(key, kept, size: size, limit: limit, byteLimit: byteLimit, rebuild: { page(from: nil) })
        }
        return (body, extent, plainTag)
    }

    /// The announcement's representation at its revision for a client that takes `coding`,
    /// encoded by `encode` and compressed if it is not cached (a failure is not kept), with its
    /// plain ETag, made by `tag` once per revision (it reads the line's tag from the store).
    func item<Failure: Error>(
        _ announcement: Announcement, media: MediaType, detailed: Bool, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> ByteBuffer
    ) throws(Failure) -> (CodedBody, tag: String) {
        let key = ItemKey(id: announcement.id, media: media, detailed: detailed)
        let cached = state.withLock { $0.items.entries[key] }.flatMap { $0.revision == announcement.revision ? $0 : nil }
        if let cached, let body = cached.entry.body(coding) { return (body, cached.tag) }
        let (plain, plainTag) = if let cached { (cached.entry.plain, cached.tag) } else {
            try { () throws(Failure) in (try encode(), tag()) }()
        }
        let body = CodedBody(plain, compressedWith: coding, by: compressor)
        state.withLock { state in
            let kept = state.items.entries[key]
            guard (kept?.revision ?? -1) <= announcement.revision else { return }  // a newer revision is cached: keep it
            func item(from entry: Entry?) -> ((revision: Int, entry: Entry, tag: String), size: Int) {
                var entry = entry ?? Entry(plain: plain)
                entry.keep(body, for: coding)
                return ((announcement.revision, entry, plainTag), entry.bytes)
            }
            let (value, size) = item(from: kept?.revision == announcement.revision ? kept?.entry : nil)
            state.items.store(key, value, size: size, limit: limit, byteLimit: byteLimit, rebuild: { item(from: nil) })
        }
        return (body, plainTag)
    }
}
