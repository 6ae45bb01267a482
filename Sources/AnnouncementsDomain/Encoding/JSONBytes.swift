/// Writes JSON as bytes, field by field, in a fixed order: the one encoding of announcements
/// shared by every output (the log, the command line, and the HTTP API).
public struct JSONBytes: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// Appends raw JSON text: punctuation or an already-encoded value.
    public mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends raw JSON bytes: an already-encoded value (a stored log line).
    public mutating func raw(_ json: some Collection<UInt8>) {
        bytes.append(contentsOf: json)
    }

    /// Appends a string literal, escaped.
    public mutating func string(_ text: String) {
        bytes.appendJSONString(text)
    }

    /// Appends a string literal, or `null`.
    public mutating func string(_ text: String?) {
        if let text { bytes.appendJSONString(text) } else { raw("null") }
    }

    /// Appends an integer, or `null`.
    public mutating func integer(_ value: Int?) {
        if let value { bytes.appendDecimal(value) } else { raw("null") }
    }

    /// Appends a string literal from JSON text (its bytes as they are), or `null`.
    public mutating func string(_ text: JSONText?) {
        if let text { bytes.appendJSONString(text) } else { raw("null") }
    }

    /// Appends `{"id":…,"title":…,"body":…}`: the v1 form (body `null` when absent).
    public mutating func announcement(_ announcement: Announcement) {
        self.announcement(id: announcement.id, title: announcement.title, body: announcement.bodyText)
    }

    /// The v1 form from its fields, for announcements held in other types (the client's).
    public mutating func announcement(id: Int, title: String, body: String?) {
        announcement(id: id, title: title, body: body.map(JSONText.init))
    }

    private mutating func announcement(id: Int, title: String, body: JSONText?) {
        raw(#"{"id":"#); integer(id)
        raw(#","title":"#); string(title)
        raw(#","body":"#); string(body)
        raw("}")
    }

    /// Appends `{"id":…,"title":…}`: the v2 form.
    public mutating func summary(_ summary: AnnouncementSummary) {
        self.summary(id: summary.id, title: summary.title)
    }

    /// The v2 form from its fields.
    public mutating func summary(id: Int, title: String) {
        raw(#"{"id":"#); integer(id)
        raw(#","title":"#); string(title)
        raw("}")
    }

    /// Appends v3's form: v1's fields (the body only with `body`), then `createdAt`, `updatedAt`
    /// (RFC 3339), `revision` and `excerpt` (the start of the body's plain text, `""` for none).
    public mutating func detailed(_ announcement: Announcement, body: Bool) {
        detailed(
            id: announcement.id, title: announcement.title, body: body ? .some(announcement.bodyText) : nil,
            createdAt: announcement.createdAt.description, updatedAt: announcement.updatedAt.description,
            revision: announcement.revision, excerpt: announcement.excerpt
        )
    }

    /// v3's list item from its fields, for items held in other types (the client's), its times
    /// as the server writes them.
    public mutating func detailedSummary(id: Int, title: String, createdAt: String, updatedAt: String, revision: Int, excerpt: String) {
        detailed(id: id, title: title, body: nil, createdAt: createdAt, updatedAt: updatedAt, revision: revision, excerpt: excerpt)
    }

    /// `body`: nil leaves the field out (a list item); `.some(nil)` writes `null`.
    private mutating func detailed(id: Int, title: String, body: JSONText??, createdAt: String, updatedAt: String, revision: Int, excerpt: String) {
        raw(#"{"id":"#); integer(id)
        raw(#","title":"#); string(title)
        if let body { raw(#","body":"#); string(body) }
        raw(#","createdAt":"#); string(createdAt)
        raw(#","updatedAt":"#); string(updatedAt)
        raw(#","revision":"#); integer(revision)
        raw(#","excerpt":"#); string(excerpt)
        raw("}")
    }

    /// Appends `[e1,e2,…]`, writing each element with `element`.
    public mutating func array<S: Sequence>(_ elements: S, _ element: (inout JSONBytes, S.Element) -> Void) {
        raw("[")
        for (index, item) in elements.enumerated() {
            if index > 0 { raw(",") }
            element(&self, item)
        }
        raw("]")
    }

    /// The bytes as a `String`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}
