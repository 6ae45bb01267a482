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

extension SearchQuery {
    /// Why a text makes no search: the rules every surface (the API, the board, the command line)
    /// checks the same way, each naming the text its own way.
    public enum Problem: Error, Sendable, Equatable {
        /// Longer than `SearchQuery.maxLength` characters.
        case tooLong(characters: Int)
        /// No letter or digit to search for.
        case noWord
        /// More than `SearchQuery.maxWords` words.
        case tooManyWords(Int)

        /// The problem as a clause about `subject` ("query parameter `q`", "the search"), which
        /// takes a verb in the singular; no capital, no full stop.
        public func describing(_ subject: String) -> String {
            switch self {
            case .tooLong(let characters): "\(subject) is \(characters) characters long; a search takes at most \(SearchQuery.maxLength)"
            case .noWord: "\(subject) holds no word to search for (letters or digits)"
            case .tooManyWords(let count): "\(subject) holds \(count) words; a search takes at most \(SearchQuery.maxWords)"
            }
        }
    }

    /// The search `text` asks for, or why it makes none.
    public static func checked(_ text: String) throws(Problem) -> SearchQuery {
        guard text.count <= maxLength else { throw .tooLong(characters: text.count) }
        guard let query = SearchQuery(text) else { throw .noWord }
        guard query.words.count <= maxWords else { throw .tooManyWords(query.words.count) }
        return query
    }
}
