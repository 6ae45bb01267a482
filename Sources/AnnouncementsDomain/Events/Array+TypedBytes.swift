extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body with a typed error (the standard one rethrows untyped).
    package func withBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        let result: Result<T, E> = withUnsafeBytes { raw in Result { () throws(E) -> T in try body(raw) } }
        return try result.get()
    }
}
