import AnnouncementsDomain

extension ReadModel {
    /// The search index of every live announcement: each half (by id) indexed on its own thread,
    /// then merged.
    package func searchIndex() -> SearchIndex {
        let model = self
        var (index, second) = Self.inHalves { half in
            let middle = model.count / 2
            var index = SearchIndex()
            index.deferSorting()
            for announcement in model.byId.elements(in: half == 0 ? 0..<middle : middle..<model.count) { index.add(announcement) }
            return index
        }
        index.merge(second)
        second = SearchIndex()
        index.finishSorting()
        return index
    }
}
