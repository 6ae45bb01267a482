import HTTPTypes
import Hummingbird
import NIOCore

extension HTTPField.Name {
    static let acceptVersion = Self("Accept-Version")!
    static let apiVersion = Self("API-Version")!
    static let totalCount = Self("X-Total-Count")!
    static let requestID = Self("X-Request-ID")!
    static let link = Self("Link")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
    static let minSeq = Self("Min-Seq")!
    static let logSeq = Self("Log-Seq")!
    static let xAccelBuffering = Self("X-Accel-Buffering")!
    static let acceptPatch = Self("Accept-Patch")!
    static let clearSiteData = Self("Clear-Site-Data")!
}

extension Response {
    /// A JSON response from encoded bytes.
    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        json(ByteBuffer(bytes: bytes), status: status)
    }

    /// A JSON response from an encoded buffer.
    static func json(_ buffer: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        encoded(buffer, .json, status: status)
    }

    /// A response from an encoded buffer (shared, not copied, when it comes from the cache).
    static func encoded(_ buffer: ByteBuffer, _ media: MediaType, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: media.contentType, .contentLength: String(buffer.readableBytes)],
            body: ResponseBody(byteBuffer: buffer)
        )
    }
}
