import AnnouncementsDomain
import HTTPTypes
import Hummingbird

/// How an announcement is named over HTTP: its `{id}` path parameter, and its ETag
/// `"<id>-<revision>-<line>"` (`line`: the revision's `LineTag`, which tells this log's event at
/// that seq from the one a log restored from an older backup gives it; `-v3` appended for version
/// 3's representation, then `-xml` for the XML
/// representation, `-textxml` for it as `text/xml`, then `-gzip` or `-deflate` for a compressed
/// body), written by reads and writes and read back from `If-Match`.
enum AnnouncementTag {
    /// The ETag of `announcement` in `media` and `version`, whose revision's line has tag `line`.
    static func etag(_ announcement: Announcement, _ media: MediaType, _ version: APIVersion, line: LineTag) -> String {
        "\"\(announcement.id)-\(announcement.revision)-\(line)\(version.tagSuffix)\(media.tagSuffix)\""
    }

    /// The entity tags in an `If-None-Match` header (every field of it, as one list): weak tags
    /// (`W/"…"`) taken as strong (RFC 9110's weak comparison, which `If-None-Match` uses); nil
    /// for `*` (any current representation).
    static func tags(ifNoneMatch request: Request) throws(APIError) -> [String]? {
        try members(of: request, .ifNoneMatch)?.map { $0.hasPrefix("W/") ? String($0.dropFirst(2)) : $0 }
    }

    /// The entity tags in a read's `If-Match` header (every field of it, as one list), weak ones
    /// with their `W/` (which never match: `If-Match` compares strongly, RFC 9110 13.1.1); nil
    /// without the header and for `*` (any current representation: a read has one).
    static func tags(ifMatch request: Request) throws(APIError) -> [String]? {
        guard request.headers[.ifMatch] != nil else { return nil }
        return try members(of: request, .ifMatch)
    }

    /// The members of a request's entity-tag list header (`If-Match`, `If-None-Match`: all its
    /// fields, as one list), trimmed, weak ones with their `W/`: nil for `*`, and for no header
    /// an empty list. `*` stands alone (RFC 9110 13.1.1): a list that holds it as one member among
    /// others (`"a", *`, `*,`) is a 400, not a match of anything.
    private static func members(of request: Request, _ name: HTTPField.Name) throws(APIError) -> [String]? {
        let fields = request.headers[values: name]
        // Most requests send none: nothing to split.
        guard !fields.isEmpty else { return [] }
        let header = fields.joined(separator: ", ")
        let members = header.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }
        if members == ["*"] { return nil }
        if members.contains("*") {
            throw APIError(.badRequest, "\(name) is either * alone or a list of entity tags, not both (\"\(VisibleText.escaped(header))\"): send * by itself to match any revision")
        }
        return members.filter { !$0.isEmpty }
    }

    /// The revision the request's `If-Match` names for announcement `id`, and the tag of its line:
    /// nil without the header and for `*` (any current revision); revision 0 for a header none of
    /// whose tags names one of this announcement's revisions (it can never match): tags of another
    /// id, ones without a line (an earlier version's tag), weak ones (`If-Match` compares strongly,
    /// RFC 9110 13.1.1). The store checks both (a line of another history, at a seq a restored log
    /// gave to another event, matches nothing). Of a list, the tag of the `current` revision counts
    /// when the list has it, else the first that names a revision (the store checks one). Any
    /// representation's tag names the revision: a client that read the announcement compressed, or
    /// as XML, sends back the tag it got. A list holding `*` is a 400 (see `members`).
    static func expected(ifMatch request: Request, id: Int, current: () -> (revision: Int, line: LineTag)?) throws(APIError) -> (revision: Int, line: LineTag?)? {
        guard request.headers[.ifMatch] != nil, let tags = try members(of: request, .ifMatch) else { return nil }
        let named = tags.compactMap { revision(named: $0, id: id) }
        if let current = current(), let match = named.first(where: { $0.revision == current.revision && $0.line == current.line }) { return match }
        return named.first ?? (0, nil)
    }

    /// The revision a write's `If-None-Match` lets it change, for announcement `id` whose current
    /// revision and line `current` gives (nil: none this node has seen): nil without the header;
    /// the current one when no tag of the list is a tag of it (weakly compared, RFC 9110 13.1.2:
    /// `W/` ignored), for the store to check it has not changed since. A 412 when the list names
    /// it, or is `*` and it exists: the write was asked not to change what is there. Where this
    /// node has not seen it and the list is `*` or names a revision of it, `unseen`: the store,
    /// deciding on the state the write is committed on, answers 404 where it does not exist there
    /// either, and 412 where it does (another node made it, and this one has not taken it in yet:
    /// which of its revisions is current is not known here). A list that names none of its
    /// revisions lets the write through. A list holding `*` is a 400 (see `members`).
    static func unchanged(ifNoneMatch request: Request, id: Int, current: () -> (revision: Int, line: LineTag)?) throws(APIError) -> (revision: Int, line: LineTag?)? {
        guard request.headers[.ifNoneMatch] != nil else { return nil }
        let tags = try tags(ifNoneMatch: request)
        let named = tags.map { $0.compactMap { revision(named: $0, id: id) } }
        guard let current = current() else { return named?.isEmpty == true ? nil : (unseen, nil) }
        if let named, !named.contains(where: { $0.revision == current.revision && $0.line == current.line }) { return current }
        throw APIError(
            .preconditionFailed,
            "If-None-Match \(named == nil ? "is *, and announcement \(id) exists (it is at revision \(current.revision))" : "names announcement \(id)'s current revision \(current.revision)"): the write was asked not to change it, and nothing was changed"
        )
    }

    /// The revision an `If-None-Match` expects of an announcement this node has not seen: none
    /// that a revision is (see `unchanged`).
    static let unseen = -1

    /// The revision and line a strong tag of announcement `id` names; nil for any other tag.
    private static func revision(named tag: String, id: Int) -> (revision: Int, line: LineTag?)? {
        guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
        var quoted = String(tag.dropFirst().dropLast())
        if let coding = ContentCoding.allCases.first(where: { quoted.hasSuffix("-\($0.rawValue)") }) {
            quoted.removeLast(coding.rawValue.count + 1)
        }
        if let media = MediaType.allCases.first(where: { !$0.tagSuffix.isEmpty && quoted.hasSuffix($0.tagSuffix) }) {
            quoted.removeLast(media.tagSuffix.count)
        }
        if let version = APIVersion.allCases.first(where: { !$0.tagSuffix.isEmpty && quoted.hasSuffix($0.tagSuffix) }) {
            quoted.removeLast(version.tagSuffix.count)
        }
        let parts = quoted.split(separator: "-")
        guard parts.count == 3, Int(parts[0]) == id, let revision = Int(parts[1]), revision > 0, let line = LineTag(parts[2]) else { return nil }
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
