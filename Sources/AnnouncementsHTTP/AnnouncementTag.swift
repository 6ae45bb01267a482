import AnnouncementsDomain
import Foundation
import Hummingbird

/// How an announcement is named over HTTP: its `{id}` path parameter, and its ETag
/// `"<id>-<revision>-<line>"` (`line`: the revision's `LineTag`, which tells this log's event at
/// that seq from the one a log restored from an older backup gives it; `-xml` appended for the XML
/// representation, `-textxml` for it as `text/xml`, then `-gzip` or `-deflate` for a compressed
/// body), written by reads and writes and read back from `If-Match`.
enum AnnouncementTag {
    /// The ETag of `announcement` in `media`, whose revision's line has tag `line`.
    static func etag(_ announcement: Announcement, _ media: MediaType, line: LineTag) -> String {
        "\"\(announcement.id)-\(announcement.revision)-\(line)\(media.tagSuffix)\""
    }

    /// The entity tags in an `If-Match` or `If-None-Match` header: a comma-separated list, weak
    /// tags (`W/"…"`) taken as strong.
    static func tags(in header: String) -> [String] {
        header.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "") }
    }

    /// The revision an `If-Match` header names for announcement `id`, and the tag of its line:
    /// nil for `*` (any current revision); revision 0 for a tag that names none of this
    /// announcement's revisions (it can never match): one of another id, or one without a line (an
    /// earlier version's tag). The store checks both (a line of another history, at a seq a
    /// restored log gave to another event, matches nothing). Of a list, the first tag counts (the
    /// store checks one revision). Any representation's tag names the revision: a client that read
    /// the announcement compressed, or as XML, sends back the tag it got.
    static func expected(ifMatch header: String, id: Int) -> (revision: Int, line: LineTag?)? {
        let tags = tags(in: header)
        if tags.contains("*") { return nil }
        var quoted = (tags.first ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        if let coding = ContentCoding.allCases.first(where: { quoted.hasSuffix("-\($0.rawValue)") }) {
            quoted.removeLast(coding.rawValue.count + 1)
        }
        if let media = MediaType.allCases.first(where: { !$0.tagSuffix.isEmpty && quoted.hasSuffix($0.tagSuffix) }) {
            quoted.removeLast(media.tagSuffix.count)
        }
        let parts = quoted.split(separator: "-")
        guard parts.count == 3, Int(parts[0]) == id, let revision = Int(parts[1]), revision > 0, let line = LineTag(parts[2])
        else { return (0, nil) }
        return (revision, line)
    }

    /// The `{id}` path parameter: a positive whole number, else 404.
    static func id(_ request: Request, _ context: AnnouncementsRequestContext) throws(APIError) -> Int {
        guard let id = context.parameters.get("id", as: Int.self), id > 0 else {
            throw APIError(.notFound, "no announcement at \(request.uri.path): ids are positive whole numbers")
        }
        return id
    }
}
