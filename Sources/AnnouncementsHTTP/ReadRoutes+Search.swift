import AnnouncementsDomain
import AnnouncementsStore
import AnnouncementsWeb
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore

/// `GET /announcements?q=…`: the live announcements holding every word of `q` (in the title or the
/// body's text), those with every word in the title first, each group newest first; paged as the
/// list is, in every version and media type.
extension ReadRoutes {
    /// The search `q` asks for; nil without `q`. A 400 for a `q` without a word or too long, and
    /// with `asOf` (search covers the live announcements only) or `sort`/`order` (a search has its
    /// own order).
    func searchQuery(_ uri: URI, asOf point: LogPoint?) throws(APIError) -> SearchQuery? {
        let parameters = uri.queryParameters
        guard let decoded = parameters["q"].map(String.init) else { return nil }
        let text = try Self.formValue(named: "q", in: uri.query) ?? decoded
        guard point == nil else {
            throw APIError(.badRequest, "query parameters `q` and `asOf` do not go together: search covers the live announcements only (read the list as it was with `asOf` alone)")
        }
        if parameters["sort"] != nil || parameters["order"] != nil {
            throw APIError(.badRequest, "query parameters `sort` and `order` do not go with `q`: a search lists the announcements with every word in the title first, then the others, each newest first")
        }
        return try Self.searchQuery(text: text)
    }

    /// The search `text` asks for: a 400 for one without a word, too long, or of too many words.
    static func searchQuery(text: String) throws(APIError) -> SearchQuery {
        do throws(SearchQuery.Problem) {
            return try SearchQuery.checked(text)
        } catch {
            // A text without a word is quoted: what the search box held may not be what was typed.
            let quoted = error == .noWord ? ": \"\(VisibleText.escaped(text))\"" : ""
            throw APIError(.badRequest, error.describing("query parameter `q`") + quoted)
        }
    }

    /// A page of the announcements `search` finds, in the current state.
    func list(searching search: SearchQuery, _ request: Request, path: String, _ query: PageQuery, _ version: APIVersion, _ media: MediaType) async throws -> Response {
        let snapshot = store.snapshot
        let found = try await store.search(search, in: snapshot, offset: query.offset, limit: query.limit)
        let (encoded, extent) = try Self.encodeList(found, version, media)
        let body = CodedBody(encoded, compressedWith: ContentCoding.preferred(by: request))
        let words = search.words.joined(separator: " ") + (search.lastIsPrefix ? "" : " ")
        let wordsTag = LineHash(of: Array(words.utf8)).description.prefix(16)
        let state = "\(snapshot.seq)-\(store.lineTag(of: snapshot.seq))"
        let plainTag = "\"search-\(version.rawValue)-\(state)-\(wordsTag)-\(query.offset)-\(query.limit)\(media.tagSuffix)\""
        return try page(request, path: path, body, extent, plainTag: plainTag, query, version, media, searched: Self.queryValue(words))
    }

    /// The value of parameter `name` in a raw query as an HTML form sends it: `+` for a space (a
    /// search box's `GET` form writes `q=fire+drill`), then percent-decoded; nil without it, a 400
    /// when it does not decode.
    static func formValue(named name: String, in query: String?) throws(APIError) -> String? {
        guard let query else { return nil }
        for item in query.split(separator: "&") where item.hasPrefix(name + "=") {
            guard let value = FormBody.decode(item.dropFirst(name.count + 1)) else {
                throw APIError(.badRequest, "query parameter `\(name)` is not valid percent-encoded UTF-8")
            }
            return value
        }
        return nil
    }

    /// `text` as a query parameter's value: every byte but the unreserved ones percent-encoded.
    static func queryValue(_ text: String) -> String {
        QueryText.encoded(text)
    }
}
