/// One character of a text and where it sits, as a message names it: `U+001B at character 5`.
public struct CharacterPlace: Sendable, Hashable, CustomStringConvertible {
    /// The character's code point.
    public var scalar: Unicode.Scalar
    /// Its position, counted from 1 in characters (as a title's length is counted).
    public var position: Int

    public init(scalar: Unicode.Scalar, position: Int) {
        self.scalar = scalar
        self.position = position
    }

    /// The code point at `index` (of `text.unicodeScalars`) and its place in `text`.
    public init(at index: String.Index, in text: String) {
        self.init(scalar: text.unicodeScalars[index], position: text[..<index].count + 1)
    }

    /// The first code point in `text` that `matches`, and its place; nil when none does.
    public static func first(in text: String, where matches: (Unicode.Scalar) -> Bool) -> CharacterPlace? {
        text.unicodeScalars.firstIndex(where: matches).map { CharacterPlace(at: $0, in: text) }
    }

    /// `U+001B`: the code point as Unicode writes it, at least four uppercase hex digits.
    public var codePoint: String { Self.codePoint(scalar) }

    /// `scalar` as Unicode writes it: `U+001B`.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// `U+001B at character 5`.
    public var description: String { "\(codePoint) at character \(position)" }
}
