/// The rules every announcement obeys, checked before anything is written: a title is not blank
/// (nor only invisible characters), holds no control character or noncharacter and is at most 255
/// characters and 1,020 bytes long; a body holds no
/// control character but tab, line feed and carriage return, no noncharacter, and is at most
/// `maxBodyBytes` long (see `ForbiddenCharacters`).
public struct ValidationRules: Sendable, Hashable {
    /// The longest title, in characters.
    public static let maxTitleLength = 255
    /// The longest title in UTF-8 bytes: four for each of `maxTitleLength` code points (a title
    /// of that many characters of one code point each always fits). A character (a grapheme
    /// cluster) has no length limit of its own: a letter with 100,000 combining accents is one.
    public static let maxTitleBytes = 4 * maxTitleLength
    /// The default limit on a body, in UTF-8 bytes (1 MiB).
    public static let defaultMaxBodyBytes = 1 << 20
    /// The most `maxBodyBytes` may be configured to (16 MiB): a write's request is held whole,
    /// and may spell a body in six times its bytes (`\u00XX`).
    public static let maxBodyBytesLimit = 16 << 20

    /// The largest body accepted, in UTF-8 bytes.
    public var maxBodyBytes: Int

    public init(maxBodyBytes: Int = ValidationRules.defaultMaxBodyBytes) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// The problems with a title, or an empty list when it is acceptable.
    public func problems(title: String) -> [FieldProblem] {
        if Self.isBlank(title) {
            return [FieldProblem(field: "title", message: title.isEmpty ? "must not be empty" : "must not be blank")]
        }
        if let place = ForbiddenCharacters.first(inTitle: title) {
            return [FieldProblem(field: "title", message: ForbiddenCharacters.message(for: place, inBody: false))]
        }
        let bytes = title.utf8.count
        if bytes > Self.maxTitleBytes {
            return [FieldProblem(field: "title", message: "must be at most \(Self.maxTitleBytes) bytes in UTF-8 (it has \(bytes))")]
        }
        // UTF-8 length bounds the character count from above: count characters only when needed.
        if bytes > Self.maxTitleLength, title.count > Self.maxTitleLength {
            return [FieldProblem(field: "title", message: "must be at most \(Self.maxTitleLength) characters (it has \(title.count))")]
        }
        return []
    }

    /// The problems with a body, or an empty list when it is acceptable.
    public func problems(body: JSONText?) -> [FieldProblem] {
        guard let body else { return [] }
        var problems: [FieldProblem] = []
        // Escapes only lengthen text: count the decoded bytes only when the escaped ones are too many.
        if body.escaped.count > maxBodyBytes {
            let length = body.utf8Count
            if length > maxBodyBytes {
                problems.append(FieldProblem(field: "body", message: "must be at most \(maxBodyBytes) bytes (it has \(length))"))
            }
        }
        if let place = ForbiddenCharacters.first(inBody: body) {
            problems.append(FieldProblem(field: "body", message: ForbiddenCharacters.message(for: place, inBody: true)))
        }
        return problems
    }

    /// The problems with a whole draft.
    public func problems(_ draft: AnnouncementDraft) -> [FieldProblem] {
        problems(title: draft.title) + problems(body: draft.bodyText)
    }

    /// The problems with the fields a patch sets.
    public func problems(_ patch: AnnouncementPatch) -> [FieldProblem] {
        (patch.title.map { problems(title: $0) } ?? []) + problems(body: patch.body?.text)
    }
}

/// One field that breaks a rule, with a message saying which rule.
public struct FieldProblem: Sendable, Hashable, CustomStringConvertible {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field) \(message)" }
}

extension ValidationRules {
    /// The longest reason an erasure may give, in characters.
    public static let maxReasonLength = 1000

    /// What is wrong with an erasure's reason, or nil: like a title, not blank, at most
    /// `maxReasonLength` characters, no control character or noncharacter.
    public static func problem(reason: String) -> String? {
        if isBlank(reason) { return "must not be blank" }
        if reason.utf8.count > 4 * maxReasonLength || reason.count > maxReasonLength { return "must be at most \(maxReasonLength) characters and \(4 * maxReasonLength) bytes" }
        if let place = ForbiddenCharacters.first(inTitle: reason) { return ForbiddenCharacters.message(for: place, inBody: false) }
        return nil
    }

    /// Whether `text` shows nothing: empty, or only whitespace and characters that are invisible
    /// by default (zero-width spaces and joiners, soft hyphens, byte order marks, fillers).
    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint }
    }

    /// What is wrong with a writer's name (an event's `by`: a token's name, or an operator's), or
    /// nil: one word, not empty, without whitespace or control characters. (`seed`, the seed
    /// data's writer, is refused where people name writers: in `tokens` and `erase --by`.)
    public static func problem(writer: String) -> String? {
        if writer.isEmpty { return "must not be empty" }
        if !isOneWord(writer) { return "must be one word, without spaces or control characters" }
        return nil
    }

    /// Whether `text` holds neither whitespace nor a control character (`ForbiddenCharacters`): a
    /// writer's name, or a token (which an `Authorization` header carries as one word).
    public static func isOneWord(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.isWhitespace || ForbiddenCharacters.isControl($0) }
    }

    /// Whether `text` holds a control character (`ForbiddenCharacters`): C0, DEL or C1.
    public static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: ForbiddenCharacters.isControl)
    }
}
