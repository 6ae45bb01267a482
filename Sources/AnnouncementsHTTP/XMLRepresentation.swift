import AnnouncementsCore

/// XML in the shape of the older tutorial's service: `<announcements><announcement><id>…`.
enum XMLRepresentation {
    static let declaration = #"<?xml version="1.0" encoding="UTF-8"?>"#

    static func announcement(_ announcement: Announcement, into xml: inout String) {
        xml += "<announcement><id>\(announcement.id)</id><title>"
        escape(announcement.title, into: &xml)
        xml += "</title>"
        if let body = announcement.body {
            xml += "<body>"
            escape(body, into: &xml)
            xml += "</body>"
        } else {
            xml += "<body/>"
        }
        xml += "</announcement>"
    }

    static func summary(_ summary: AnnouncementSummary, into xml: inout String) {
        xml += "<announcement><id>\(summary.id)</id><title>"
        escape(summary.title, into: &xml)
        xml += "</title></announcement>"
    }

    static func escape(_ text: String, into xml: inout String) {
        for character in text.unicodeScalars {
            switch character {
            case "&": xml += "&amp;"
            case "<": xml += "&lt;"
            case ">": xml += "&gt;"
            case "\"": xml += "&quot;"
            case "'": xml += "&apos;"
            default:
                // Characters XML 1.0 cannot hold at all are dropped rather than produce a broken document.
                if character.value < 0x20, character != "\n", character != "\r", character != "\t" { continue }
                xml.unicodeScalars.append(character)
            }
        }
    }
}
