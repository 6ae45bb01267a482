import HTTPTypes
import Hummingbird
import NIOCore

extension Response {
    /// A response from a body as it goes on the wire: `Content-Encoding` names its coding when it
    /// is compressed, and `Content-Length` counts the bytes sent, compressed or not.
    static func encoded(_ body: CodedBody, _ media: MediaType, status: HTTPResponse.Status = .ok) -> Response {
        coded(body, contentType: media.contentType, status: status)
    }

    /// `encoded(_:_:status:)` for a body of any `Content-Type`.
    static func coded(_ body: CodedBody, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .contentLength: String(body.bytes.readableBytes)]
        if let coding = body.coding { headers[.contentEncoding] = coding.headerValue }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body.bytes))
    }
}
