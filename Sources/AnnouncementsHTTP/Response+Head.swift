import Hummingbird

extension Response {
    /// This answer as a `HEAD`'s: its status and headers, no body; and, for one without a length
    /// (a stream), none either, where Hummingbird's `createHeadResponse()` says `Content-Length:
    /// 0` (RFC 9110 9.3.2: a HEAD's headers are its GET's).
    func headKeepingLength() -> Response {
        guard body.contentLength == nil, headers[.contentLength] == nil else { return createHeadResponse() }
        return Response(status: status, headers: headers, body: ResponseBody { writer in try await writer.finish(nil) })
    }
}
