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
///
/// Each thread also keeps its own copies of what it served at the current log position, in
/// buffers of its own (`ThreadSlots`), which it finds without the shared lock, the published state
/// or the shared buffers (`threadsPage`, `threadsItem`: the caller checks them against the store's
/// seq first). A representation served from the shared entries has its buffer's count written by
/// every core that sends it, on every request; a thread's copy, by that thread and the event loops
/// of the connections it answers (two threads whose identities hash to one slot share it: correct,
/// only slower). The copies are bounded per slot (`copyLimit` entries, `copyByteLimit` bytes of
/// buffers' capacity; larger ones are served from the shared entries) and start over at the next
/// log position.
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

        mutating func removeAll(where shouldRemove: (Key) -> Bool) {
            for key in entries.keys where shouldRemove(key) {
                bytes -= sizes[key] ?? 0
                entries[key] = nil
                sizes[key] = nil
            }
        }
    }

    private struct State {
        var seq = -1
        var pages = Bounded<PageKey, (entry: Entry, extent: PageExtent, tag: String)>()
        var items = Bounded<ItemKey, (revision: Int, entry: Entry, tag: String)>()
        /// Erased announcements: none of their representations is kept again.
        var erased: Set<Int> = []
    }

    private let state = Mutex(State())
    private let limit: Int
    private let byteLimit: Int
    private let compressor: Compressor

    /// What a thread keeps of what it served: by key and content coding.
    private enum CopyKey: Hashable {
        case page(PageKey, ContentCoding?)
        case item(ItemKey, ContentCoding?)
    }

    /// A representation in buffers of one thread's own: the body, its page's extent (a page's),
    /// its plain ETag.
    private struct Copy: Sendable {
        var body: CodedBody
        var extent: PageExtent?
        var tag: String
    }

    /// A thread's copies, all made at log position `seq`.
    private struct Copies {
        var seq = -1
        var kept = Bounded<CopyKey, Copy>()
    }

    private let copies: ThreadSlots<Copies>
    /// The copies a thread keeps, at most, and the bytes.
    let copyLimit: Int
    let copyByteLimit: Int

    /// The bytes the cached pages count against their budget (for tests).
    var pageBytes: Int { state.withLock { $0.pages.bytes } }
    /// The announcements whose representations are cached (for tests).
    var itemIDs: Set<Int> { state.withLock { Set($0.items.entries.keys.map(\.id)) } }

    /// At most `limit` pages and `limit` announcements, each kind at most `byteLimit` bytes.
    /// Each thread keeps at most `copyLimit` copies of `copyByteLimit` bytes in all, in one of
    /// `threadSlots` slots.
    init(limit: Int = 4096, byteLimit: Int = 64 << 20, copyLimit: Int = 256, copyByteLimit: Int = 1 << 20, threadSlots: Int = 64, compressor: Compressor = .zlib) {
        self.limit = limit
        self.byteLimit = byteLimit
        self.copyLimit = copyLimit
        self.copyByteLimit = copyByteLimit
        self.compressor = compressor
        copies = ThreadSlots(count: threadSlots) { _ in Copies() }
    }

    /// The page for `key` at log position `seq` in `coding`, as the calling thread kept it when it
    /// served it last at that position; nil when it did not (then `page` serves it, and keeps it).
    func threadsPage(_ key: PageKey, seq: Int, coding: ContentCoding?) -> (CodedBody, PageExtent, tag: String)? {
        guard let copy = copy(.page(key, coding), seq: seq), let extent = copy.extent else { return nil }
        return (copy.body, extent, copy.tag)
    }

    /// The announcement `key` at log position `seq` in `coding`, as the calling thread kept it (see
    /// `threadsPage`; `item` serves and keeps it).
    func threadsItem(_ key: ItemKey, seq: Int, coding: ContentCoding?) -> (CodedBody, tag: String)? {
        copy(.item(key, coding), seq: seq).map { ($0.body, $0.tag) }
    }

    private func copy(_ key: CopyKey, seq: Int) -> Copy? {
        copies.withCallersSlot { $0.seq == seq ? $0.kept.entries[key] : nil }
    }

    /// Keeps a copy of `body` and `tag`, in buffers of their own, as the calling thread's for `key`
    /// at `seq` (a thread serving an older position than its copies' keeps none).
    private func keepCopy(_ key: CopyKey, seq: Int, _ body: CodedBody, _ extent: PageExtent?, _ tag: String) {
        guard body.bytes.readableBytes + tag.utf8.count <= copyByteLimit,
              copies.withCallersSlot({ $0.seq <= seq }) else { return }
        var bytes = ByteBufferAllocator().buffer(capacity: body.bytes.readableBytes)
        bytes.writeImmutableBuffer(body.bytes)
        // The memory it holds: the buffer's capacity (the allocator may round it up), and the tag's.
        let size = bytes.capacity + tag.utf8.count
        let copy = Copy(body: CodedBody(bytes: bytes, coding: body.coding), extent: extent, tag: Self.ownCopy(of: tag))
        let (limit, byteLimit) = (copyLimit, copyByteLimit)
        copies.withCallersSlot { copies in
            if copies.seq != seq {
                guard seq > copies.seq else { return }
                copies = Copies(seq: seq)
            }
            copies.kept.store(key, copy, size: size, limit: limit, byteLimit: byteLimit) { (copy, size) }
        }
    }

    /// `string` in storage of its own (one longer than a small string's 15 bytes is otherwise
    /// shared by its copies, its count written by each thread that takes one).
    private static func ownCopy(of string: String) -> String {
        String(unsafeUninitializedCapacity: string.utf8.count) { $0.initialize(fromContentsOf: string.utf8) }
    }

    /// Lets go of every representation that may hold the texts of announcements `ids`, erased in
    /// the state at log position `seq`: their own, every page of an older position, and every
    /// thread's copies of one; and keeps none of them, or of an older position, from now on (a
    /// reader still on an older state may encode one after this).
    func forget(erased ids: [Int], at seq: Int) {
        let gone = Set(ids)
        state.withLock { state in
            state.erased.formUnion(gone)
            state.items.removeAll { gone.contains($0.id) }
            if state.seq < seq {
                state.seq = seq
                state.pages.removeAll()
            }
        }
        copies.forEach { copies in
            if copies.seq < seq { copies = Copies(seq: seq) }
        }
    }

    /// The page for `key` at log position `seq` for a client that takes `coding`, encoded by
    /// `encode` and compressed if it is not cached (a failure is not kept), with its plain ETag,
    /// made by `tag` once per page and position (not per request: it has seven parts); kept as
    /// the calling thread's copy too.
    func page<Failure: Error>(
        _ key: PageKey, seq: Int, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> (ByteBuffer, PageExtent)
    ) throws(Failure) -> (CodedBody, PageExtent, tag: String) {
        let served = try sharedPage(key, seq: seq, coding: coding, tag: tag, encode: encode)
        keepCopy(.page(key, coding), seq: seq, served.0, served.1, served.tag)
        return served
    }

    /// `page`, from and into the shared entries.
    private func sharedPage<Failure: Error>(
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
    /// plain ETag, made by `tag` once per revision (it reads the line's tag from the store); kept
    /// as the calling thread's copy for log position `seq`, the state `announcement` is from.
    func item<Failure: Error>(
        _ announcement: Announcement, seq: Int, media: MediaType, detailed: Bool, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> ByteBuffer
    ) throws(Failure) -> (CodedBody, tag: String) {
        let key = ItemKey(id: announcement.id, media: media, detailed: detailed)
        let served = try sharedItem(announcement, key, coding: coding, tag: tag, encode: encode)
        keepCopy(.item(key, coding), seq: seq, served.0, nil, served.tag)
        return served
    }

    /// `item`, from and into the shared entries.
    private func sharedItem<Failure: Error>(
        _ announcement: Announcement, _ key: ItemKey, coding: ContentCoding?,
        tag: () -> String,
        encode: () throws(Failure) -> ByteBuffer
    ) throws(Failure) -> (CodedBody, tag: String) {
        let cached = state.withLock { $0.items.entries[key] }.flatMap { $0.revision == announcement.revision ? $0 : nil }
        if let cached, let body = cached.entry.body(coding) { return (body, cached.tag) }
        let (plain, plainTag) = if let cached { (cached.entry.plain, cached.tag) } else {
            try { () throws(Failure) in (try encode(), tag()) }()
        }
        let body = CodedBody(plain, compressedWith: coding, by: compressor)
        state.withLock { state in
            let kept = state.items.entries[key]
            guard (kept?.revision ?? -1) <= announcement.revision else { return }  // a newer revision is cached: keep it
            guard !state.erased.contains(key.id) else { return }
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
