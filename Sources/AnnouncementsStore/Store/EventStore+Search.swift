import AnnouncementsDomain

extension EventStore {
    /// Starts building the search index from the current state, in the background (a server does
    /// at start-up, so that the first search does not wait for it); a search starts it too.
    public func startSearchIndex() {
        // The snapshot's index is taken (not kept beside the one that grows from it).
        search.start(from: { published.withLock { $0.model } }, loaded: { loadedSearchIndex.withLock { $0.take() } }) { seq in
            // The announcements with an event after the snapshot's index (changed, deleted or erased since).
            index.withLock { index in index.lastSeqByID.indices.filter { index.lastSeqByID[$0] > seq }.map { $0 + 1 } }
        }
    }

    /// A page of the live announcements in `model` (the state a request reads) that hold every word
    /// of `query` (see `SearchIndex.search`), and how many there are in all. Waits until the index
    /// covers `model`; `notReady` when it did not in time (a first build still running).
    public func search(_ query: SearchQuery, in model: ReadModel, offset: Int, limit: Int) async throws(StoreError) -> Page<Announcement> {
        startSearchIndex()
        let found = await search.search(covering: model.seq) { $0.search(query, offset: offset, limit: limit) }
        guard let (ids, total) = found else {
            throw .notReady("the search index is still being built (after a start without a snapshot that holds it): search again in a moment")
        }
        // The index may be ahead of `model` (a write published since): what `model` does not hold
        // is left out of the page.
        return Page(items: ids.compactMap { model.announcement(id: $0) }, total: total)
    }
}
