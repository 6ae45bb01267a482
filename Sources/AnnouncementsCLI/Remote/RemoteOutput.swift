import AnnouncementsClient
import struct AnnouncementsDomain.JSONBytes
import enum AnnouncementsDomain.VisibleText
import Foundation

/// How remote commands print announcements: JSON in the forms the server and `replay --format
/// json` write (through the same `JSONBytes`).
enum RemoteOutput {
    static func print(_ announcement: Announcement, format: RemoteFormat) {
        switch format {
        case .json:
            var json = JSONBytes()
            json.announcement(id: announcement.id, title: announcement.title, body: announcement.body)
            Output.line(json.text)
        case .table:
            var lines = ["id:       \(announcement.id)", "title:    \(VisibleText.escaped(announcement.title))"]
            if let revision = announcement.revision { lines.append("revision: \(VisibleText.escaped(revision))") }
            // The body on lines of its own: its line feeds and tabs kept, anything else escaped.
            lines.append(announcement.body.map { "body:\n\(VisibleText.escaped($0, multiline: true))" } ?? "body:     (none)")
            Output.line(lines.joined(separator: "\n"))
        }
    }

    /// A page of summaries: v2's, or v3's and a search's with their details (`detailed`: a column
    /// of when each last changed, even over no rows, and in JSON the server's fields).
    static func print(_ page: Page<AnnouncementSummary>, format: RemoteFormat, detailed: Bool) {
        switch format {
        case .json:
            Output.line(json(page) { json, item in
                guard let details = item.details else { return json.summary(id: item.id, title: item.title) }
                json.detailedSummary(
                    id: item.id, title: item.title, createdAt: time(details.createdAt), updatedAt: time(details.updatedAt),
                    revision: details.revisionSeq, excerpt: details.excerpt
                )
            })
        case .table where detailed:
            var table = TextTable("ID", "UPDATED", "TITLE")
            for item in page.items { table.add(String(item.id), item.details.map { time($0.updatedAt) } ?? "-", VisibleText.escaped(item.title)) }
            Output.line(rendered(table, page))
        case .table:
            var table = TextTable("ID", "TITLE")
            for item in page.items { table.add(String(item.id), VisibleText.escaped(item.title)) }
            Output.line(rendered(table, page))
        }
    }

    private static func time(_ date: Date) -> String {
        AnnouncementDetails.serverTime(date)
    }

    static func print(_ page: Page<Announcement>, format: RemoteFormat) {
        switch format {
        case .json: Output.line(json(page) { $0.announcement(id: $1.id, title: $1.title, body: $1.body) })
        case .table:
            var table = TextTable("ID", "TITLE", "BODY")
            for item in page.items { table.add(String(item.id), VisibleText.escaped(item.title), item.body.map { "\($0.utf8.count) bytes" } ?? "-") }
            Output.line(rendered(table, page))
        }
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
