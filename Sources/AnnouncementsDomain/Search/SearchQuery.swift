/// What a search looks for: the folded words of a text (see `SearchWords`), the last one also as
/// the start of longer words (search as you type) unless the text ends with white space or the
/// word is a single byte long (a one-letter prefix would take in a large part of every vocabulary).
public struct SearchQuery: Sendable, Hashable {
    /// The longest text a search takes, in characters.
    public static let maxLength = 200
    /// The most words a query may hold.
    public static let maxWords = 8

    /// The folded words, in the order given.
    public var words: [String]
    /// Whether the last word also finds the words it starts.
    public var lastIsPrefix: Bool

    /// The query `text` asks for; nil when it holds no word.
    public init?(_ text: String) {
        let words = SearchWords.words(text)
        guard let last = words.last else { return nil }
        self.words = words
        let endsWithSpace = text.unicodeScalars.last?.properties.isWhitespace ?? false
        lastIsPrefix = !endsWithSpace && last.utf8.count > 1
    }
}
