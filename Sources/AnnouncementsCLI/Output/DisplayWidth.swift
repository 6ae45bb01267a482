extension Character {
    /// How many columns a terminal gives this character: 2 for East Asian wide and fullwidth
    /// characters (CJK ideographs, kana, hangul, fullwidth forms) and emoji shown as emoji, else 1
    /// (a combining mark is part of its character, as Swift counts them). Tables pad and cut by
    /// this, so that a Japanese title does not push its row's columns out of line.
    var columns: Int {
        guard let scalar = unicodeScalars.first else { return 0 }
        if scalar.properties.isEmojiPresentation || unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return Self.wideRanges.contains { $0.contains(scalar.value) } ? 2 : 1
    }

    /// Unicode's East Asian Wide (W) and Fullwidth (F) blocks, the ones text holds (UAX #11).
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo leading consonants
        0x2E80...0x303E,  // CJK radicals, Kangxi radicals, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,  // Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun, CJK strokes, enclosed CJK, compatibility
        0x3400...0x4DBF,  // CJK Unified Ideographs Extension A
        0x4E00...0x9FFF,  // CJK Unified Ideographs
        0xA000...0xA4CF,  // Yi syllables and radicals
        0xA960...0xA97F,  // Hangul Jamo Extended-A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x1B000...0x1B2FF,  // kana supplement and extensions, Nushu
        0x20000...0x2FFFD,  // CJK Unified Ideographs Extensions B to F, compatibility supplement
        0x30000...0x3FFFD,  // CJK Unified Ideographs Extensions G and H
    ]
}

extension String {
    /// How many columns a terminal gives this text (see `Character.columns`).
    var columns: Int {
        reduce(0) { $0 + $1.columns }
    }
}
