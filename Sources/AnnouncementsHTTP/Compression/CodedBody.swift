import NIOCore

/// A body as it goes on the wire: a representation's bytes, compressed with `coding`, or as
/// they are when `coding` is nil.
struct CodedBody: Sendable {
    var bytes: ByteBuffer
    var coding: ContentCoding?

    /// The bytes as they are.
    init(plain bytes: ByteBuffer) {
        self.bytes = bytes
        coding = nil
    }

    init(bytes: ByteBuffer, coding: ContentCoding?) {
        self.bytes = bytes
        self.coding = coding
    }

    /// `plain`, compressed with `coding` when there is one and the body is worth compressing
    /// (`ContentCoding.minimumBytes` or more, and smaller once compressed); else as it is.
    init(_ plain: ByteBuffer, compressedWith coding: ContentCoding?, by compressor: Compressor = .zlib) {
        guard let coding, plain.readableBytes >= ContentCoding.minimumBytes,
              let compressed = compressor.compress(plain, coding), compressed.readableBytes < plain.readableBytes
        else {
            self.init(plain: plain)
            return
        }
        self.init(bytes: compressed, coding: coding)
    }
}

/// What compresses bodies: zlib, or a stand-in that tests count.
struct Compressor: Sendable {
    /// The compressed bytes, or nil when compressing failed (the body then goes as it is: a
    /// client always takes the plain bytes, and nothing about the data is wrong).
    var compress: @Sendable (ByteBuffer, ContentCoding) -> ByteBuffer?

    /// zlib at its default level.
    static let zlib = Compressor { plain, coding in try? Zlib.compress(plain, as: coding) }
}
