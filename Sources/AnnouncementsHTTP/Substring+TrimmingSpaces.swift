extension Substring {
    /// Without the spaces and tabs around it: a header element's optional whitespace (RFC 9110
    /// 5.6.3), the only blanks a field's list or parameters may hold there.
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
