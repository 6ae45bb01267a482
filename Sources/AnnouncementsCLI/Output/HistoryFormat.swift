import AnnouncementsDomain

/// How `history` shows an audit trail.
enum HistoryFormat {
    /// SEQ, TIME, EVENT, BY, ID and what changed.
    static func table(_ entries: [HistoryEntry]) -> String {
        var table = TextTable(header)
        for entry in entries { table.add(cells(entry)) }
        return table.rendered
    }

    static let header = ["SEQ", "TIME", "EVENT", "BY", "ID", "CHANGE"]

    /// One entry's row, writers and titles escaped for the terminal.
    static func cells(_ entry: HistoryEntry) -> [String] {
        [
            String(entry.event.seq), entry.event.at.description, entry.event.type.rawValue,
            VisibleText.escaped(entry.event.by), String(entry.event.id), change(entry),
        ]
    }

    /// `title "A" → "B"; body 1,200 → 1,350 bytes (+150)`, or the created or deleted announcement;
    /// titles escaped for the terminal. An entry whose announcement was not seen before it (a
    /// follow that started later) says what became of it: `title → "B"; body → 1,350 bytes`.
    static func change(_ entry: HistoryEntry) -> String {
        switch entry.event.change {
        case .erased(let reason):
            return "erased: \(quoted(reason))"
        case _ where entry.textsErased:
            // Sealed, or an erasure interrupted before its lines were: no text of it is shown.
            return "(text erased)"
        case .created(let draft):
            return "\(quoted(draft.title)) (\(bodySize(draft.bodyText)))"
        case .deleted:
            return entry.before.map { "\(quoted($0.title)) (\(bodySize($0.bodyText)))" } ?? ""
        case .sealed:
            return "(text erased)"
        case .edited(let patch):
            var parts: [String] = []
            guard let before = entry.before else {
                if let title = patch.title { parts.append("title → \(quoted(title))") }
                if let body = patch.body { parts.append(body.text.map { "body → \(Output.count($0.utf8Count)) bytes" } ?? "body cleared") }
                return parts.joined(separator: "; ")
            }
            if let title = patch.title {
                parts.append("title \(quoted(before.title)) → \(quoted(title))")
            }
            if let body = patch.body {
                let old = before.bodyText?.utf8Count, new = body.text?.utf8Count
                switch (old, new) {
                case (nil, nil): parts.append("body stays empty")
                case (nil, let new?): parts.append("body added (\(Output.count(new)) bytes)")
                case (let old?, nil): parts.append("body cleared (was \(Output.count(old)) bytes)")
                case (let old?, let new?):
                    let delta = new - old
                    let sign = delta >= 0 ? "+" : "-"
                    parts.append("body \(Output.count(old)) → \(Output.count(new)) bytes (\(sign)\(Output.count(abs(delta))))")
                }
            }
            return parts.joined(separator: "; ")
        }
    }

    /// An array of `{seq, at, type, id, by, title: {from, to}, bodyLength: {from, to}}`; `title`
    /// and `bodyLength` appear only when they changed. An erased announcement's events say
    /// `"textsErased": true` instead (their texts are gone), and its `erased` event its `reason`.
    static func json(_ entries: [HistoryEntry]) -> String {
        var json = JSONBytes()
        json.array(entries) { json, entry in
            let event = entry.event
            json.raw(#"{"seq":"#); json.integer(event.seq)
            json.raw(#","at":"#); json.string(event.at.description)
            json.raw(#","type":"#); json.string(event.type.rawValue)
            json.raw(#","id":"#); json.integer(event.id)
            json.raw(#","by":"#); json.string(event.by)
            if case .erased(let reason) = event.change {
                json.raw(#","reason":"#); json.string(reason)
            }
            guard !entry.textsErased else {
                json.raw(#","textsErased":true}"#)
                return
            }
            if entry.before?.title != entry.after?.title {
                json.raw(#","title":{"from":"#); json.string(entry.before?.title)
                json.raw(#","to":"#); json.string(entry.after?.title); json.raw("}")
            }
            let oldLength = entry.before?.bodyText?.utf8Count, newLength = entry.after?.bodyText?.utf8Count
            if entry.before?.bodyText != entry.after?.bodyText {
                json.raw(#","bodyLength":{"from":"#); json.integer(oldLength)
                json.raw(#","to":"#); json.integer(newLength); json.raw("}")
            }
            json.raw("}")
        }
        return json.text
    }

    /// `"Title"`: cut to 50 characters, then escaped (an escape is never cut).
    private static func quoted(_ title: String) -> String {
        "\"\(VisibleText.escaped(title.truncated(to: 50)))\""
    }

    private static func bodySize(_ body: JSONText?) -> String {
        body.map { "body \(Output.count($0.utf8Count)) bytes" } ?? "no body"
    }
}
