import AnnouncementsDomain
import HTTPTypes
import Hummingbird

/// The representations the API speaks: JSON, and XML for the older clients (as `application/xml`,
/// or as `text/xml` to a client that asks for that).
enum MediaType: Sendable, Hashable, CaseIterable {
    case json, xml, textXML

    /// The exact Content-Type of each (the original clients compare the JSON one as a string).
    var contentType: String {
        switch self {
        case .json: "application/json;charset=UTF-8"
        case .xml: "application/xml;charset=UTF-8"
        case .textXML: "text/xml;charset=UTF-8"
        }
    }

    /// What an ETag of a representation in this media ends with (before a coding's suffix):
    /// nothing for JSON, `-xml`, `-textxml`. Every ETag the API makes spells it so.
    var tagSuffix: String {
        switch self {
        case .json: ""
        case .xml: "-xml"
        case .textXML: "-textxml"
        }
    }

    /// The type and subtype, as `Accept` names them.
    private var name: (type: Substring, subtype: Substring) {
        switch self {
        case .json: ("application", "json")
        case .xml: ("application", "xml")
        case .textXML: ("text", "xml")
        }
    }

    /// What the request's `Accept` prefers, as RFC 9110 negotiates: each representation takes the
    /// quality (`q`, 1 when not given) of the most specific range that matches it (`type/subtype`,
    /// then `type/*`, then `*/*`); the highest quality above 0 wins, JSON first on a tie, then
    /// `application/xml`. No `Accept` is JSON; one that allows none of them is a 406. A range
    /// whose weight does not parse is left out (`WeightedChoices`), as for `Accept-Encoding`.
    /// A resource with fewer representations passes the ones it has (`[.json]`): a browser's
    /// `Accept`, which prefers XML but takes `*/*`, then gets JSON rather than a 406.
    static func negotiate(_ request: Request, among candidates: [MediaType] = allCases) throws(APIError) -> MediaType {
        guard let accept = request.headers[.accept], !accept.isEmpty else { return .json }
        let ranges = WeightedChoices(accept).choices.compactMap(AcceptRange.init)
        var best: (media: MediaType, quality: Int)?
        for media in candidates {
            let quality = media.quality(in: ranges)
            if quality > 0, quality > (best?.quality ?? 0) { best = (media, quality) }
        }
        guard let best else {
            throw APIError(.notAcceptable, "Accept: \(accept) allows no representation this API has: ask for application/json or application/xml")
        }
        return best.media
    }
}

extension MediaType {
    /// For what exists only as JSON (events, an erasure's answer): an `Accept` that does not take
    /// JSON (an XML-only one) is a 406.
    static func requireJSON(_ request: Request, _ what: String) throws(APIError) {
        do throws(APIError) {
            _ = try negotiate(request, among: [.json])
        } catch {
            throw APIError(.notAcceptable, "\(what) is JSON only: ask for application/json")
        }
    }

    /// Whether the request is a browser's navigation: its `Accept` names `text/html` itself, at a
    /// quality above that of every representation the API has (Chromium sends `text/html,…,
    /// application/xml;q=0.9,*/*;q=0.8`; curl's `*/*` and an API client's `application/json` are
    /// not). Such a request to a path nobody serves is answered with a page, not the API's XML.
    static func asksForPage(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        let ranges = WeightedChoices(accept).choices.compactMap(AcceptRange.init)
        guard let html = ranges.first(where: { $0.type == "text" && $0.subtype == "html" }), html.quality > 0 else { return false }
        return allCases.allSatisfy { $0.quality(in: ranges) < html.quality }
    }

    /// Whether the request asks `GET /events` for its stream rather than its JSON page: `Accept`
    /// names `text/event-stream` itself, with a weight above 0 (`;q=0` refuses it, RFC 9110
    /// 12.4.2) and no lower than the one it gives JSON (the highest quality wins, 12.5.1; on a
    /// tie, the stream, which was named). A wildcard alone (`*/*`) is the page.
    static func asksForStream(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        let ranges = WeightedChoices(accept).choices.compactMap(AcceptRange.init)
        guard let stream = ranges.first(where: { $0.type == "text" && $0.subtype == "event-stream" }), stream.quality > 0 else { return false }
        return stream.quality >= json.quality(in: ranges)
    }

    /// The quality `ranges` give this representation: that of the most specific range that
    /// matches it, 0 when none does.
    fileprivate func quality(in ranges: [AcceptRange]) -> Int {
        ranges.filter { $0.matches(name) }.max { $0.specificity < $1.specificity }?.quality ?? 0
    }
}

/// One media range of an `Accept` header: `type/subtype`, maybe a wildcard, and its quality in
/// thousandths.
private struct AcceptRange {
    var type: Substring
    var subtype: Substring
    var quality: Int

    /// nil for a range that is not `type/subtype` (ignored, as RFC 9110 allows).
    init?(_ choice: WeightedChoices.Choice) {
        let range = choice.value
        guard let slash = range.firstIndex(of: "/") else { return nil }
        type = range[..<slash]
        subtype = range[range.index(after: slash)...]
        guard !type.isEmpty, !subtype.isEmpty, type != "*" || subtype == "*" else { return nil }
        quality = choice.weight
    }

    /// 2 for `type/subtype`, 1 for `type/*`, 0 for `*/*`.
    var specificity: Int { type == "*" ? 0 : subtype == "*" ? 1 : 2 }

    func matches(_ name: (type: Substring, subtype: Substring)) -> Bool {
        (type == "*" || type == name.type) && (subtype == "*" || subtype == name.subtype)
    }
}
