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
    /// cannot carry. Works on the UTF-8 bytes and copies each run that needs no escape whole: a
    /// page of bodies is megabytes, and a character at a time took seconds of a shared thread.
    private static func append<Failure: Error>(
        _ text: String, into xml: inout String, uncarried: (String.Index) throws(Failure) -> Unicode.Scalar
    ) throws(Failure) {
        var contiguous = text
        var failure: Failure?
        contiguous.withUTF8 { bytes in
            var run = 0
            var offset = 0
            while offset < bytes.count {
                // `@` and up, but 0xEF (which starts U+F000–U+FFFF): never escaped, never refused.
                if bytes[offset] >= 0x40 && bytes[offset] != 0xEF {
                    offset += 1
                    continue
                }
                let width = uncarriedWidth(bytes, at: offset)
                let entity = width == 0 ? entity(for: bytes[offset]) : nil
                guard width > 0 || entity != nil else {
                    offset += 1
                    continue
                }
                xml += String(decoding: UnsafeBufferPointer(rebasing: bytes[run..<offset]), as: UTF8.self)
                if let entity {
                    xml += entity
                } else {
                    do throws(Failure) {
                        xml.unicodeScalars.append(try uncarried(text.utf8.index(text.utf8.startIndex, offsetBy: offset)))
                    } catch {
                        failure = error
                        return
                    }
                }
                offset += max(width, 1)
                run = offset
            }
            xml += String(decoding: UnsafeBufferPointer(rebasing: bytes[run...]), as: UTF8.self)
        }
        if let failure { throw failure }
    }

    /// The entity that stands for `byte` in element content, nil for a byte written as it is.
    private static func entity(for byte: UInt8) -> String? {
        switch byte {
        case UInt8(ascii: "&"): "&amp;"
        case UInt8(ascii: "<"): "&lt;"
        case UInt8(ascii: ">"): "&gt;"
        case UInt8(ascii: "\""): "&quot;"
        case UInt8(ascii: "'"): "&apos;"
        case UInt8(ascii: "\r"): "&#xD;"
        default: nil
        }
    }

    /// The length in bytes of the character at `offset` of valid UTF-8 `bytes` when XML 1.0
    /// cannot carry it (a control character other than tab, LF and CR; U+FFFE; U+FFFF), else 0.
    private static func uncarriedWidth(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int {
        switch bytes[offset] {
        case 0x09, 0x0A, 0x0D: 0
        case 0..<0x20: 1
        // U+FFFE and U+FFFF: EF BF BE, EF BF BF.
        case 0xEF where offset + 2 < bytes.count && bytes[offset + 1] == 0xBF && bytes[offset + 2] >= 0xBE: 3
        default: 0
        }
    }
}
