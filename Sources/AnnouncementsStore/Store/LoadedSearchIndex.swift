import AnnouncementsDomain

/// A snapshot's search index, and the seq it covers.
struct LoadedSearchIndex: Sendable {
    var index: SearchIndex
    var seq: Int
}
