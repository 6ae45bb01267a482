import AnnouncementsClient
import struct AnnouncementsCore.JSONBytes

/// How remote commands print announcements.
enum RemoteOutput {
    static func print(_ announcement: Announcement, format: RemoteFormat) {
        switch format {
        case .json:
            var json = JSONBytes()
            write(announcement, to: &json)
            Output.line(json.text)
        case .table:
            var lines = ["id:       \(announcement.id)", "title:    \(announcement.title)"]
            if let revision = announcement.revision { lines.append("revision: \(revision)") }
            lines.append(announcement.body.map { "body:\n\($0)" } ?? "body:     (none)")
            Output.line(lines.joined(separator: "\n"))
        }
    }

    static func print(_ page: Page<AnnouncementSummary>, format: RemoteFormat) {
        switch format {
        case .json:
            Output.line(json(page) { json, item in
                json.raw(#"{"id":"#); json.integer(item.id)
                json.raw(#","title":"#); json.string(item.title)
                json.raw("}")
            })
        case .table:
            var table = TextTable("ID", "TITLE")
            for item in page.items { table.add(String(item.id), item.title) }
            Output.line(rendered(table, page))
        }
    }

    static func print(_ page: Page<Announcement>, format: RemoteFormat) {
        switch format {
        case .json: Output.line(json(page) { write($1, to: &$0) })
        case .table:
            var table = TextTable("ID", "TITLE", "BODY")
            for item in page.items { table.add(String(item.id), item.title, item.body.map { "\($0.utf8.count) bytes" } ?? "-") }
            Output.line(rendered(table, page))
        }
    }

    /// `{"id":…,"title":…,"body":…}`, as the server and `replay --format json` write it.
    private static func write(_ announcement: Announcement, to json: inout JSONBytes) {
        json.raw(#"{"id":"#); json.integer(announcement.id)
        json.raw(#","title":"#); json.string(announcement.title)
        json.raw(#","body":"#); json.string(announcement.body)
        json.raw("}")
    }

    /// `{"total":…,"offset":…,"announcements":[…]}`.
    private static func json<Item>(_ page: Page<Item>, _ item: (inout JSONBytes, Item) -> Void) -> String {
        var json = JSONBytes()
        json.raw(#"{"total":"#); json.integer(page.total)
        json.raw(#","offset":"#); json.integer(page.offset)
        json.raw(#","announcements":"#); json.array(page.items, item)
        json.raw("}")
        return json.text
    }

    private static func rendered<Item>(_ table: TextTable, _ page: Page<Item>) -> String {
        let range = page.items.isEmpty ? "none" : "\(page.offset + 1)-\(page.offset + page.items.count)"
        return "\(table.rendered)\n\(range) of \(page.total)\(page.hasMore ? " (more with --offset \(page.offset + page.items.count))" : "")"
    }

}
