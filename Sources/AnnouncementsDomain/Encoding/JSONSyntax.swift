/// Whether bytes are one JSON text as RFC 8259 says, read by the scanner the writes use (no
/// trailing comma, no comment, no lone surrogate, at most 64 levels deep): for a body read with
/// another parser after it (an erasure's reason), which would let such texts through.
public enum JSONSyntax {
    /// Nil for a well-formed text; else what is wrong and where (`invalid JSON at column 14: …`).
    public static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(bytes)
        do throws(LineProblem) {
            scanner.skipWhitespace()
            try scanner.skipValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.isAtEnd else { throw scanner.syntax("unexpected characters after the value") }
            return nil
        } catch {
            return error.message
        }
    }
}
