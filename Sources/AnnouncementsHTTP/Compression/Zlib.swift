import CZlib
import NIOCore

/// zlib, the one place the C library is called: buffers in, buffers out, every stream ended
/// with `defer`.
enum Zlib {
    /// zlib's compression level for responses. A body is compressed once per change and then
    /// served from the cache, so the default level's extra CPU over level 1 is paid once, for a
    /// body that is smaller on every request (BENCHMARKS.md has the measurements).
    static let defaultLevel: Int32 = 6

    /// A failure reported by zlib: its return code and message.
    struct Failure: Error, CustomStringConvertible, Sendable {
        /// zlib's return code (`Z_MEM_ERROR`, `Z_DATA_ERROR`, …).
        var code: Int32
        var message: String

        var description: String { "zlib error \(code): \(message)" }
    }

    /// `input` compressed as `coding`: a gzip member (RFC 1952) or a zlib stream (RFC 1950).
    static func compress(_ input: ByteBuffer, as coding: ContentCoding, level: Int32 = defaultLevel) throws(Failure) -> ByteBuffer {
        guard input.readableBytes <= Int(UInt32.max) else { throw Failure(code: Z_BUF_ERROR, message: "input of \(input.readableBytes) bytes is too large") }
        var stream = z_stream()
        let started = czlib_deflate_init(&stream, level, coding.windowBits)
        guard started == Z_OK else { throw Failure(code: started, stream: stream) }
        defer { deflateEnd(&stream) }
        // One call does it all: deflateBound is room enough for any input, in any case.
        let bound = Int(deflateBound(&stream, uLong(input.readableBytes)))
        var output = ByteBuffer()
        var status = Z_OK
        input.withUnsafeReadableBytes { source in
            _ = output.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(source.count)
                stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(min(target.count, Int(UInt32.max)))
                status = deflate(&stream, Z_FINISH)
                return Int(stream.total_out)
            }
        }
        guard status == Z_STREAM_END else { throw Failure(code: status, stream: stream) }
        return output
    }

    /// What `compress` wrote, read back; at most `limit` bytes of it (larger is a failure).
    /// For tests and benchmarks, which check what went on the wire.
    static func decompress(_ input: ByteBuffer, as coding: ContentCoding, limit: Int = 64 << 20) throws(Failure) -> ByteBuffer {
        var stream = z_stream()
        let started = czlib_inflate_init(&stream, coding.windowBits)
        guard started == Z_OK else { throw Failure(code: started, stream: stream) }
        defer { inflateEnd(&stream) }
        var output = ByteBuffer()
        var status = Z_OK
        input.withUnsafeReadableBytes { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(min(source.count, Int(UInt32.max)))
            while status == Z_OK, output.readableBytes <= limit {
                _ = output.writeWithUnsafeMutableBytes(minimumWritableBytes: 64 << 10) { target in
                    stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(min(target.count, Int(UInt32.max)))
                    let before = stream.total_out
                    status = inflate(&stream, Z_NO_FLUSH)
                    return Int(stream.total_out - before)
                }
                // No progress with room to spare: the input ended before the stream did.
                if status == Z_BUF_ERROR || (status == Z_OK && stream.avail_in == 0 && stream.avail_out > 0) { status = Z_BUF_ERROR }
            }
        }
        guard status == Z_STREAM_END, output.readableBytes <= limit else {
            throw output.readableBytes > limit
                ? Failure(code: Z_BUF_ERROR, message: "more than \(limit) bytes once decompressed")
                : Failure(code: status, stream: stream)
        }
        return output
    }
}

extension Zlib.Failure {
    /// The failure `code` of `stream`, with zlib's message when it left one.
    fileprivate init(code: Int32, stream: z_stream) {
        self.code = code
        message = stream.msg.map { String(cString: $0) } ?? Self.meaning(of: code)
    }

    /// What zlib's return codes mean, for a failure without a message of its own.
    private static func meaning(of code: Int32) -> String {
        switch code {
        case Z_MEM_ERROR: "out of memory"
        case Z_BUF_ERROR: "the input ended before the stream did"
        case Z_DATA_ERROR: "the input is not in the expected format"
        case Z_STREAM_ERROR: "invalid parameters"
        case Z_VERSION_ERROR: "incompatible zlib version"
        default: "unexpected result"
        }
    }
}

extension ContentCoding {
    /// zlib's `windowBits` for the coding: 15 (a 32 KB window) in the zlib wrapper, plus 16 for gzip's.
    fileprivate var windowBits: Int32 {
        switch self {
        case .gzip: 15 + 16
        case .deflate: 15
        }
    }
}
