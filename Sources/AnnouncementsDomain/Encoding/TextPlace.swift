/// Where a byte of a UTF-8 text sits, as an editor shows it: its line (lines end at LF, CR LF or
/// CR, as libyaml counts them) and its column (in characters: code points), both from 1. What a
/// config file's and a JSON body's errors name.
public struct TextPlace: Sendable, Hashable {
    public var line: Int
    public var column: Int

    /// The place of the byte at `offset` of `bytes`.
    public init(ofByte offset: Int, in bytes: some Collection<UInt8>) {
        var (line, column) = (1, 1)
        var previous: UInt8?
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                if previous != UInt8(ascii: "\r") { line += 1 }
                column = 1
            } else if byte == UInt8(ascii: "\r") {
                (line, column) = (line + 1, 1)
            } else if byte & 0xC0 != 0x80 {
                // Not a UTF-8 continuation byte: a character begins.
                column += 1
            }
            previous = byte
        }
        (self.line, self.column) = (line, column)
    }
}
