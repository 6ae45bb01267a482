import AnnouncementsDomain

/// A time as a page shows it: `iso` for `<time datetime>` (which the page's script shows in the
/// reader's locale and time zone), and `text` for a page read without script, in UTC.
public struct DisplayTime: Sendable, Hashable {
    /// RFC 3339 in UTC, with milliseconds: `2026-11-21T09:30:00.000Z`.
    public var iso: String
    /// `2026-11-21 09:30 UTC`.
    public var text: String

    public init(_ time: Timestamp) {
        iso = time.description
        // The log's form is fixed: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
        let utf8 = Array(iso.utf8)
        if utf8.count >= 16 {
            text = String(decoding: utf8[0..<10], as: UTF8.self) + " " + String(decoding: utf8[11..<16], as: UTF8.self) + " UTC"
        } else {
            text = iso
        }
    }
}
