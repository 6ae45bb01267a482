import AnnouncementsDomain

/// XML in the shape of the older tutorial's service: `<announcements><announcement><id>…`.
///
/// XML 1.0 cannot carry U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+FFFE or U+FFFF, not even
/// as a character reference. Titles and bodies written under today's rules never hold them, but a
/// log written before those rules (or by hand) can: such a value is refused, a 406 naming the
/// announcement, the field and the character, rather than changed where an XML client could not
/// see it. JSON carries every value.
enum XMLRepresentation {
    static let declaration = #"<?xml version="1.0" encoding="UTF-8"?>"#

    static func announcement(_ announcement: Announcement, into xml: inout String) throws(APIError) {
        xml += "<announcement><id>\(announcement.id)</id><title>"
        try escape(announcement.title, field: "title", of: announcement.id, into: &xml)
        xml += "</title>"
        try body(of: announcement, into: &xml)
        xml += "</announcement>"
    }

    /// v3's form: v1's elements (the body only with `body`), then `createdAt`, `updatedAt`,
    /// `revision` and `excerpt`.
    static func detailed(_ announcement: Announcement, body: Bool, into xml: inout String) throws(APIError) {
        xml += "<announcement><id>\(announcement.id)</id><title>"
        try escape(announcement.title, field: "title", of: announcement.id, into: &xml)
        xml += "</title>"
        if body { try self.body(of: announcement, into: &xml) }
        xml += "<createdAt>\(announcement.createdAt)</createdAt><updatedAt>\(announcement.updatedAt)</updatedAt>"
        xml += "<revision>\(announcement.revision)</revision><excerpt>"
        try escape(announcement.excerpt, field: "body", of: announcement.id, into: &xml)
        xml += "</excerpt></announcement>"
    }

    /// `<body>…</body>`, or `<body/>` for none.
    private static func body(of announcement: Announcement, into xml: inout String) throws(APIError) {
        guard let body = announcement.body else {
            xml += "<body/>"
            return
        }
        xml += "<body>"
        try escape(body, field: "body", of: announcement.id, into: &xml)
        xml += "</body>"
    }

    static func summary(_ summary: AnnouncementSummary, into xml: inout String) throws(APIError) {
        xml += "<announcement><id>\(summary.id)</id><title>"
        try escape(summary.title, field: "title", of: summary.id, into: &xml)
        xml += "</title></announcement>"
    }

    /// Appends `text` as element content: `& < > " '` as entities, and CR as `&#xD;` (a parser reads
    /// a literal CR as a line feed); throws a 406 at a character XML 1.0 cannot carry.
    static func escape(_ text: String, field: String, of id: Int, into xml: inout String) throws(APIError) {
        try append(text, into: &xml) { index throws(APIError) in
            throw APIError(
                .notAcceptable,
                "announcement \(id)'s \(field) holds \(CharacterPlace(at: index, in: text)), which XML 1.0 cannot carry: ask for application/json, or have a writer correct the \(field)"
            )
        }
    }

    /// Appends `text` as element content as `escape` does, with U+FFFD in place of a character
    /// XML 1.0 cannot carry: for the server's own texts (an error's message quotes what it was sent).
    static func escapeReplacing(_ text: String, into xml: inout String) {
        append(text, into: &xml) { _ in "\u{FFFD}" }
    }

    /// Appends `text` escaped, with what `uncarried` gives (or throws) for a character XML 1.0
    /// cannot carry.
    private static func append<Failure: Error>(
        _ text: String, into xml: inout String, uncarried: (String.UnicodeScalarView.Index) throws(Failure) -> Unicode.Scalar
    ) throws(Failure) {
        for (index, scalar) in zip(text.unicodeScalars.indices, text.unicodeScalars) {
            switch scalar {
            case "&": xml += "&amp;"
            case "<": xml += "&lt;"
            case ">": xml += "&gt;"
            case "\"": xml += "&quot;"
            case "'": xml += "&apos;"
            case "\r": xml += "&#xD;"
            case _ where !canCarry(scalar): xml.unicodeScalars.append(try uncarried(index))
            default: xml.unicodeScalars.append(scalar)
            }
        }
    }

    /// Whether XML 1.0 can carry `scalar` (its `Char` production; Swift has no lone surrogates).
    static func canCarry(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: true
        case 0..<0x20, 0xFFFE, 0xFFFF: false
        default: true
        }
    }
}
