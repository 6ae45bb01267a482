import AnnouncementsDomain

extension LogReader {
    /// The events that match `filter`, oldest first, each with the announcement before and after
    /// (see `HistoryFold`). Stops at the first bad line.
    @discardableResult
    public func history(
        _ filter: HistoryFilter,
        _ body: (HistoryEntry) -> Void
    ) throws(LogError) -> Summary {
        var fold = HistoryFold(path: path, filter: filter)
        return try read { line throws(LogError) in
            try fold.add(line, body) ? .continue : .stop
        }
    }
}
