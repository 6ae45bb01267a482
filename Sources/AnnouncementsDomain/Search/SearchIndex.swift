/// Which live announcements hold which words: the index behind `GET /announcements?q=`.
///
/// Each word (folded: see `SearchWords`) has two sets of ids (`PostingSet`): the announcements
/// whose title holds it, and those whose title or body text (`HTMLText.plain`) does. Words are
/// also kept in byte order, so that the last word of a query finds every word it starts.
///
/// It is a value changed by one writer at a time (`add`, `remove`); the store keeps it beside the
/// read model and brings it up to date after each write (see `SearchIndexer`).
public struct SearchIndex: Sendable {
    private struct Term: Sendable {
        var word: [UInt8]
        var hash: UInt64
        var title = PostingSet()
        var any = PostingSet()
        /// The last announcement added to each set: a word that stands in a text many times is
        /// added once.
        var lastTitle = UInt32.max
        var lastAny = UInt32.max
    }

    private var table = WordTable()
    private var terms: [Term] = []
    /// Slots of removed terms, for the next new word.
    private var freeSlots: [Int] = []
    /// The slots of every word, in the byte order of the words (in the order they came while
    /// `isSortingDeferred`).
    private var sorted: [Int] = []
    /// Whether new words go to the end of `sorted`, to be sorted once (`finishSorting`): building
    /// an index of many words, one sort instead of an insert into the middle for each.
    private var isSortingDeferred = false
    /// The largest id indexed.
    public private(set) var maxId = 0
    /// The number of announcements indexed.
    public package(set) var count = 0
    /// The number of distinct words.
    public private(set) var wordCount = 0

    public init() {}

    /// Indexes announcement `id` (not indexed yet) with its title and HTML body.
    public mutating func add(id: Int, title: String, body: String?) {
        add(id: id, title: title, bodyUTF8: body.map { Array($0.utf8) })
    }

    /// Indexes `announcement` (not indexed yet): its body read from its JSON text as bytes.
    public mutating func add(_ announcement: Announcement) {
        add(id: announcement.id, title: announcement.title, bodyUTF8: announcement.bodyText?.utf8)
    }

    /// Takes out `announcement`, indexed as it is.
    public mutating func remove(_ announcement: Announcement) {
        remove(id: announcement.id, title: announcement.title, bodyUTF8: announcement.bodyText?.utf8)
    }

    private mutating func add(id: Int, title: String, bodyUTF8 body: [UInt8]?) {
        guard let key = UInt32(exactly: id), key < .max else { return }
        SearchWords.forEachWord(inUTF8: Array(title.utf8)) { word in
            let slot = self.slot(for: word)
            if terms[slot].lastTitle != key {
                terms[slot].lastTitle = key
                terms[slot].title.insert(key)
            }
            if terms[slot].lastAny != key {
                terms[slot].lastAny = key
                terms[slot].any.insert(key)
            }
        }
        if let body {
            SearchWords.forEachWord(inUTF8: HTMLText.plainUTF8(body)) { word in
                let slot = self.slot(for: word)
                if terms[slot].lastAny != key {
                    terms[slot].lastAny = key
                    terms[slot].any.insert(key)
                }
            }
        }
        maxId = max(maxId, id)
        count += 1
    }

    /// Takes out announcement `id`, indexed with this title and body.
    public mutating func remove(id: Int, title: String, body: String?) {
        remove(id: id, title: title, bodyUTF8: body.map { Array($0.utf8) })
    }

    private mutating func remove(id: Int, title: String, bodyUTF8 body: [UInt8]?) {
        guard let key = UInt32(exactly: id), key < .max else { return }
        let remove = { (index: inout SearchIndex, word: UnsafeBufferPointer<UInt8>) in
            guard let slot = index.slot(of: word) else { return }
            index.terms[slot].any.remove(key)
            index.terms[slot].title.remove(key)
            // Its next add is a new one.
            index.terms[slot].lastAny = .max
            index.terms[slot].lastTitle = .max
            if index.terms[slot].any.isEmpty { index.removeTerm(at: slot) }
        }
        SearchWords.forEachWord(inUTF8: Array(title.utf8)) { remove(&self, $0) }
        if let body { SearchWords.forEachWord(inUTF8: HTMLText.plainUTF8(body)) { remove(&self, $0) } }
        count -= 1
    }

    /// Adds what `other` indexes (other announcements: two halves built side by side, merged).
    public mutating func merge(_ other: SearchIndex) {
        for otherSlot in other.sorted {
            let term = other.terms[otherSlot]
            let slot = term.word.withUnsafeBufferPointer { self.slot(for: $0) }
            terms[slot].title.formUnion(term.title)
            terms[slot].any.formUnion(term.any)
        }
        count += other.count
        maxId = max(maxId, other.maxId)
    }

    // MARK: - Snapshots

    /// Calls `body` with each word's bytes and its two sets (titles, and titles or bodies): what a
    /// snapshot stores.
    package func forEachTerm(_ body: (_ word: [UInt8], _ title: PostingSet, _ any: PostingSet) -> Void) {
        for slot in sorted { body(terms[slot].word, terms[slot].title, terms[slot].any) }
    }

    /// The index of these words and sets (a snapshot's), covering `count` announcements up to id
    /// `maxId`; nil unless the words are distinct, in byte order, none empty, each with an
    /// announcement, and every id at most `maxId`.
    package init?(terms: [(word: [UInt8], title: PostingSet, any: PostingSet)], count: Int, maxId: Int) {
        guard zip(terms, terms.dropFirst()).allSatisfy({ $0.word.lexicographicallyPrecedes($1.word) }) else { return nil }
        for term in terms {
            guard !term.word.isEmpty, term.word.count <= SearchWords.maxBytes, !term.any.isEmpty,
                  term.any.maxId <= maxId, term.title.maxId <= maxId else { return nil }
            let slot = self.terms.count
            let hash = term.word.withUnsafeBufferPointer(WordTable.hash)
            self.terms.append(Term(word: term.word, hash: hash, title: term.title, any: term.any))
            table.insert(slot, hash: hash) { self.terms[$0].hash }
            sorted.append(slot)
        }
        wordCount = terms.count
        self.count = count
        self.maxId = maxId
    }

    /// Takes out every announcement whose id is set in `ids` (whatever its texts were): what the
    /// lines after a snapshot changed, before their current texts are added again.
    package mutating func removeAll(in ids: DenseBits) {
        for slot in sorted {
            terms[slot].title.subtract(ids)
            terms[slot].any.subtract(ids)
            terms[slot].lastTitle = .max
            terms[slot].lastAny = .max
        }
        for slot in sorted where terms[slot].any.isEmpty { removeTerm(at: slot) }
    }

    /// The ids of the announcements that hold every word of `query`, those with every word in their
    /// title first, each group newest (highest id) first: `limit` of them after `offset`, and how
    /// many there are in all.
    public func search(_ query: SearchQuery, offset: Int, limit: Int) -> (ids: [Int], total: Int) {
        var all: DenseBits?
        var inTitles: DenseBits?
        for (position, word) in query.words.enumerated() {
            let bytes = Array(word.utf8)
            let matching = position == query.words.count - 1 && query.lastIsPrefix ? slots(prefixedBy: bytes) : slot(of: bytes).map { [$0] } ?? []
            guard !matching.isEmpty else { return ([], 0) }
            var any = DenseBits(maxId: maxId)
            var title = DenseBits(maxId: maxId)
            for slot in matching {
                terms[slot].any.add(to: &any)
                terms[slot].title.add(to: &title)
            }
            if all == nil { all = any } else { all?.formIntersection(any) }
            if inTitles == nil { inTitles = title } else { inTitles?.formIntersection(title) }
        }
        guard let all, let inTitles else { return ([], 0) }
        var inBodies = all
        inBodies.subtract(inTitles)
        let titleCount = inTitles.count
        let total = titleCount + inBodies.count
        let (offset, limit) = (max(0, offset), max(0, limit))
        var ids = offset < titleCount ? inTitles.descending(skipping: offset, limit: limit) : []
        if ids.count < limit {
            ids += inBodies.descending(skipping: max(0, offset - titleCount), limit: limit - ids.count)
        }
        return (ids, total)
    }

    /// About how many bytes the index holds: the words, their sets, and the tables.
    public var storedBytes: Int {
        var bytes = sorted.count * 8 + table.storedBytes + terms.count * 64
        for term in terms {
            bytes += term.word.count + term.title.storedBytes + term.any.storedBytes
        }
        return bytes
    }

    // MARK: - Words

    /// The slot of `word`, made when it is new.
    private mutating func slot(for word: UnsafeBufferPointer<UInt8>) -> Int {
        let hash = WordTable.hash(word)
        if let slot = slot(of: word, hash: hash) { return slot }
        let term = Term(word: Array(word), hash: hash)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            terms[slot] = term
        } else {
            slot = terms.count
            terms.append(term)
        }
        table.insert(slot, hash: hash) { terms[$0].hash }
        if isSortingDeferred {
            sorted.append(slot)
        } else {
            sorted.insert(slot, at: sorted.partitionPoint { terms[$0].word.lexicographicallyPrecedes(term.word) })
        }
        wordCount += 1
        return slot
    }

    /// New words are put in order only by `finishSorting` (nothing may search before it).
    package mutating func deferSorting() {
        isSortingDeferred = true
    }

    /// Puts the words in order after `deferSorting`.
    package mutating func finishSorting() {
        guard isSortingDeferred else { return }
        let terms = self.terms
        sorted.sort { terms[$0].word.lexicographicallyPrecedes(terms[$1].word) }
        isSortingDeferred = false
    }

    /// The slot of `word`, when some announcement holds it.
    private func slot(of word: [UInt8]) -> Int? {
        word.withUnsafeBufferPointer { slot(of: $0) }
    }

    /// The slot of `word` (whose hash is `hash`, computed when not given), when some announcement
    /// holds it: the stored hashes compared first, the bytes only of a word with the same hash.
    private func slot(of word: UnsafeBufferPointer<UInt8>, hash: UInt64? = nil) -> Int? {
        let hash = hash ?? WordTable.hash(word)
        return terms.withUnsafeBufferPointer { terms in
            table.find(hash: hash) { terms[$0].hash == hash && WordTable.same(terms[$0].word, word) }
        }
    }

    private mutating func removeTerm(at slot: Int) {
        let word = terms[slot].word
        let place = isSortingDeferred ? sorted.firstIndex(of: slot) ?? sorted.count : sorted.partitionPoint { terms[$0].word.lexicographicallyPrecedes(word) }
        if place < sorted.count, sorted[place] == slot { sorted.remove(at: place) }
        table.remove(slot, hash: terms[slot].hash)
        terms[slot] = Term(word: [], hash: 0)
        freeSlots.append(slot)
        wordCount -= 1
    }

    /// The slots of the words that start with `prefix`.
    private func slots(prefixedBy prefix: [UInt8]) -> [Int] {
        var place = sorted.partitionPoint { terms[$0].word.lexicographicallyPrecedes(prefix) }
        var found: [Int] = []
        while place < sorted.count, terms[sorted[place]].word.starts(with: prefix) {
            found.append(sorted[place])
            place += 1
        }
        return found
    }
}
