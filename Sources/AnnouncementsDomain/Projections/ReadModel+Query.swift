/// Which page of which ordering a list request wants.
public struct PageQuery: Sendable, Hashable {
    public enum Sort: String, Sendable, Hashable, CaseIterable {
        case id, title
    }

    public enum Order: String, Sendable, Hashable, CaseIterable {
        case asc, desc
    }

    public var offset: Int
    public var limit: Int
    public var sort: Sort
    public var order: Order

    public init(offset: Int = 0, limit: Int = 10, sort: Sort = .id, order: Order = .asc) {
        self.offset = offset
        self.limit = limit
        self.sort = sort
        self.order = order
    }
}

/// One page of a list, with the size of the whole list.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var total: Int

    public init(items: [Item], total: Int) {
        self.items = items
        self.total = total
    }
}

extension ReadModel {
    /// A page of full announcements: the v1 read model.
    public func announcements(_ query: PageQuery) -> Page<Announcement> {
        let descending = query.order == .desc
        switch query.sort {
        case .id:
            return Page(items: byId.slice(offset: query.offset, limit: query.limit, descending: descending), total: count)
        case .title:
            let ids: [Int]
            if let byTitle {
                ids = byTitle.slice(offset: query.offset, limit: query.limit, descending: descending).map(\.id)
            } else {
                let sorted = byId.elements.map(TitleProbe.init).sorted()
                let ordered = descending ? Array(sorted.reversed()) : sorted
                ids = ordered.dropFirst(max(0, query.offset)).prefix(max(0, query.limit)).map(\.key.id)
            }
            return Page(items: ids.compactMap { byId.element(for: $0) }, total: count)
        }
    }

    /// A page of summaries: the v2 read model.
    public func summaries(_ query: PageQuery) -> Page<AnnouncementSummary> {
        let page = announcements(query)
        return Page(items: page.items.map(\.summary), total: page.total)
    }
}
