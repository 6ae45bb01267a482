import AnnouncementsDomain

/// The difference between two texts, word by word, as a page shows it: the words only in the old
/// text struck out, those only in the new one underlined, the rest as they are.
public struct TextDiff: Sendable, Hashable {
    /// A run of words that are all removed, all added, or all kept. (Three stored flags, not an
    /// enum: the templates test each one.)
    public struct Part: Sendable, Hashable {
        public var text: String
        public var removed: Bool
        public var added: Bool
        public var kept: Bool

        init(_ kind: Edit, _ text: String) {
            self.text = text
            removed = kind == .removed
            added = kind == .added
            kept = kind == .kept
        }
    }

    enum Edit: Sendable, Hashable { case removed, added, kept }

    /// The runs, in the order of the texts.
    public var parts: [Part]

    /// Whether the texts are the same.
    public var isUnchanged: Bool { parts.allSatisfy(\.kept) }

    /// The most words changed that are matched one by one; past it, the old text is shown
    /// removed and the new one added whole (a diff's cost grows with the square of the changes).
    public static let maxEdits = 2000

    /// The most steps (words compared, diagonals tried) one diff may take before it shows the old
    /// text removed and the new one added whole: its cost also grows with the texts' length, and
    /// a page of many diffs must not take seconds of a shared thread.
    public static let maxWork = 2_000_000

    /// `old` against `new`.
    public init(from old: String, to new: String) {
        var work = Self.maxWork
        self.init(from: old, to: new, work: &work)
    }

    /// `old` against `new`, within `work` steps (what is left of them goes back).
    public init(from old: String, to new: String, work: inout Int) {
        let a = Self.words(old)
        let b = Self.words(new)
        var parts: [Part] = []
        func append(_ kind: Edit, _ word: Substring) {
            if let last = parts.last, last.removed == (kind == .removed), last.added == (kind == .added) {
                parts[parts.count - 1].text += word
            } else {
                parts.append(Part(kind, String(word)))
            }
        }
        // What both texts start and end with needs no search: most edits change a few words.
        var prefix = 0
        while prefix < a.count, prefix < b.count, Self.same(a[prefix], b[prefix]) { prefix += 1 }
        var suffix = 0
        while suffix < a.count - prefix, suffix < b.count - prefix, Self.same(a[a.count - 1 - suffix], b[b.count - 1 - suffix]) { suffix += 1 }
        for word in a[..<prefix] { append(.kept, word) }
        let middleA = Array(a[prefix..<(a.count - suffix)])
        let middleB = Array(b[prefix..<(b.count - suffix)])
        if let edits = Self.shortestEdits(middleA, middleB, work: &work) {
            for (kind, index) in edits { append(kind, kind == .added ? middleB[index] : middleA[index]) }
        } else {
            for word in middleA { append(.removed, word) }
            for word in middleB { append(.added, word) }
        }
        for word in a[(a.count - suffix)...] { append(.kept, word) }
        self.parts = parts
    }

    /// Two announcement bodies (HTML) compared by their text, or by their markup where only that
    /// changed (a link's address, bold made italic): no change ever shows as none.
    public init(bodies old: String, _ new: String) {
        var work = Self.maxWork
        self.init(bodies: old, new, work: &work)
    }

    /// The same, within `work` steps (what is left of them goes back).
    public init(bodies old: String, _ new: String, work: inout Int) {
        let text = TextDiff(from: HTMLText.plain(old), to: HTMLText.plain(new), work: &work)
        self = text.isUnchanged && old != new ? TextDiff(from: old, to: new, work: &work) : text
    }

    /// `text` as words and the white space between them, each a token of its own, so that the
    /// tokens joined are the text.
    static func words(_ text: String) -> [Substring] {
        var tokens: [Substring] = []
        var start = text.startIndex
        var inSpace: Bool?
        for index in text.indices {
            let space = text[index].isWhitespace
            if let current = inSpace, current != space {
                tokens.append(text[start..<index])
                start = index
            }
            inSpace = space
        }
        if start < text.endIndex { tokens.append(text[start...]) }
        return tokens
    }

    /// Whether two words are the same bytes: the log records a change byte for byte, and a word
    /// that changed only its Unicode normalization (é as e and a combining accent) is a change
    /// shown (`==` would take the two spellings for one).
    static func same(_ a: Substring, _ b: Substring) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// The edits that turn `a` into `b` with the fewest removals and additions (Myers, "An O(ND)
    /// Difference Algorithm", 1986): each is removed (an index in `a`), added (in `b`) or kept (in
    /// `a`). Nil past `maxEdits`, or once it has taken `work` steps (each diagonal tried, and each
    /// word matched along it, is one): `work` is what is left.
    static func shortestEdits(_ a: [Substring], _ b: [Substring], work: inout Int) -> [(Edit, Int)]? {
        let n = a.count, m = b.count
        let limit = min(n + m, maxEdits)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        // The furthest x on each diagonal after each step d, for k in -d...d.
        var trace: [[Int]] = []
        for d in 0...limit {
            for k in stride(from: -d, through: d, by: 2) {
                var x = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]) ? v[offset + k + 1] : v[offset + k - 1] + 1
                var y = x - k
                let start = x
                while x < n, y < m, same(a[x], b[y]) {
                    x += 1
                    y += 1
                }
                work -= x - start + 1
                guard work >= 0 else { return nil }
                v[offset + k] = x
                if x >= n, y >= m {
                    trace.append(Array(v[(offset - d)...(offset + d)]))
                    return backtrack(trace, n: n, m: m)
                }
            }
            trace.append(Array(v[(offset - d)...(offset + d)]))
        }
        return nil
    }

    private static func backtrack(_ trace: [[Int]], n: Int, m: Int) -> [(Edit, Int)] {
        var edits: [(Edit, Int)] = []
        var x = n, y = m
        for d in stride(from: trace.count - 1, through: 1, by: -1) {
            let previous = trace[d - 1]
            func at(_ k: Int) -> Int { previous[k + d - 1] }
            let k = x - y
            let previousK = k == -d || (k != d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
            let previousX = at(previousK)
            let previousY = previousX - previousK
            while x > previousX, y > previousY {
                x -= 1
                y -= 1
                edits.append((.kept, x))
            }
            if x == previousX {
                edits.append((.added, previousY))
            } else {
                edits.append((.removed, previousX))
            }
            x = previousX
            y = previousY
        }
        while x > 0, y > 0 {
            x -= 1
            y -= 1
            edits.append((.kept, x))
        }
        return edits.reversed()
    }
}
