import AnnouncementsDomain

extension ReadModel {
    /// Builds the title index after a replay that deferred it: one sort instead of n inserts, with
    /// each half of the announcements keyed and sorted on its own thread, then merged.
    public mutating func buildTitleIndex() {
        guard !hasTitleIndex else { return }
        let model = self
        let (left, right) = Self.inHalves { model.sortedTitleProbes(half: $0) }
        setTitleIndex(merging: left, right)
    }
}
