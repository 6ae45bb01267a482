import HTTPTypes
import NIOCore

/// Writes a node sends on to the writer role's holder together, in one request, and the holder's
/// answers to them, in the same order (`POST /_nodes/writes`: `WriteForwarder` sends it,
/// `ForwardedWritesRoute` answers it).
///
/// The body is binary: a version byte, the number of items (UInt16), then each item. A write is
/// its method, its path with its query, its fields and its body; an answer is its status, its
/// fields and its body. A string or a body is its length (UInt32) and its bytes; every integer is
/// big-endian.
enum ForwardedWrites {
    static let path = "/_nodes/writes"
    static let contentType = "application/vnd.announcements.forwarded-writes"
    static let version: UInt8 = 1
    /// The most writes one request carries.
    static let maxItems = 32

    /// The most bytes of writes (`Write.encodedBytes`) a node puts in one request: room for one
    /// of the largest a node reads (`maxRequestBytes`) with a head of up to as many bytes.
    static func batchBytes(maxRequestBytes: Int) -> Int {
        2 * maxRequestBytes
    }

    /// The most bytes of a request the holder reads: `batchBytes`, its version and count, and a
    /// request head's worth more (a write larger than `batchBytes` goes alone).
    static func maxBytes(maxRequestBytes: Int) -> Int {
        batchBytes(maxRequestBytes: maxRequestBytes) + 3 + ConnectionLimits.maxHeadBytes
    }

    struct Write: Sendable {
        var method: HTTPRequest.Method
        /// The path with its query (`/announcements/3?x=1`).
        var path: String
        var fields: HTTPFields
        var body: ByteBuffer

        /// Its bytes in a request: each string and the body after its length, the fields after
        /// their count.
        var encodedBytes: Int {
            4 + method.rawValue.utf8.count + 4 + path.utf8.count + 2
                + fields.reduce(0) { $0 + 8 + $1.name.rawName.utf8.count + $1.value.utf8.count } + 4 + body.readableBytes
        }
    }

    struct Answer: Sendable {
        var status: HTTPResponse.Status
        var fields: HTTPFields
        var body: ByteBuffer
    }

    /// Bytes that are not a request or an answer of this form; says what and where.
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    static func encode(_ writes: [Write]) -> ByteBuffer {
        var buffer = ByteBuffer()
        writeStart(count: writes.count, to: &buffer)
        for write in writes {
            writeBytes(write.method.rawValue.utf8, to: &buffer)
            writeBytes(write.path.utf8, to: &buffer)
            writeFields(write.fields, to: &buffer)
            writeBody(write.body, to: &buffer)
        }
        return buffer
    }

    static func encode(_ answers: [Answer]) -> ByteBuffer {
        var buffer = ByteBuffer()
        writeStart(count: answers.count, to: &buffer)
        for answer in answers {
            buffer.writeInteger(UInt16(answer.status.code))
            writeFields(answer.fields, to: &buffer)
            writeBody(answer.body, to: &buffer)
        }
        return buffer
    }

    static func writes(in buffer: ByteBuffer) throws(Malformed) -> [Write] {
        try items(in: buffer) { reader, number throws(Malformed) in
            let methodName = try reader.string("write \(number)'s method")
            guard let method = HTTPRequest.Method(methodName) else { throw Malformed(description: "write \(number)'s method `\(methodName)` is not a method") }
            let path = try reader.string("write \(number)'s path")
            guard path.first == "/" else { throw Malformed(description: "write \(number)'s path does not start with /") }
            return Write(method: method, path: path, fields: try reader.fields("write \(number)"), body: try reader.body("write \(number)"))
        }
    }

    static func answers(in buffer: ByteBuffer) throws(Malformed) -> [Answer] {
        try items(in: buffer) { reader, number throws(Malformed) in
            guard let code = reader.buffer.readInteger(as: UInt16.self), (100...599).contains(code) else {
                throw Malformed(description: "answer \(number)'s status is missing or not one")
            }
            return Answer(status: .init(code: Int(code)), fields: try reader.fields("answer \(number)"), body: try reader.body("answer \(number)"))
        }
    }

    /// The items `read` reads (given their number, from 1), after the version and their count,
    /// with nothing after them.
    private static func items<Item>(in buffer: ByteBuffer, _ read: (inout Reader, Int) throws(Malformed) -> Item) throws(Malformed) -> [Item] {
        var reader = Reader(buffer: buffer)
        let count = try reader.start()
        var items: [Item] = []
        items.reserveCapacity(count)
        for index in 0..<count { items.append(try read(&reader, index + 1)) }
        try reader.end()
        return items
    }

    // MARK: - Pieces

    private static func writeStart(count: Int, to buffer: inout ByteBuffer) {
        buffer.writeInteger(version)
        buffer.writeInteger(UInt16(count))
    }

    private static func writeBytes(_ bytes: some Collection<UInt8>, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(bytes.count))
        buffer.writeBytes(bytes)
    }

    private static func writeFields(_ fields: HTTPFields, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt16(fields.count))
        for field in fields {
            writeBytes(field.name.rawName.utf8, to: &buffer)
            writeBytes(field.value.utf8, to: &buffer)
        }
    }

    private static func writeBody(_ body: ByteBuffer, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(body.readableBytes))
        buffer.writeImmutableBuffer(body)
    }

    private struct Reader {
        var buffer: ByteBuffer

        /// The number of items, after the version.
        mutating func start() throws(Malformed) -> Int {
            guard let version = buffer.readInteger(as: UInt8.self) else { throw Malformed(description: "the body is empty") }
            guard version == ForwardedWrites.version else {
                throw Malformed(description: "version \(version) of forwarded writes; this node reads version \(ForwardedWrites.version)")
            }
            guard let count = buffer.readInteger(as: UInt16.self) else { throw Malformed(description: "the number of items is missing") }
            guard count <= ForwardedWrites.maxItems else { throw Malformed(description: "\(count) items, more than the \(ForwardedWrites.maxItems) a request may carry") }
            return Int(count)
        }

        func end() throws(Malformed) {
            guard buffer.readableBytes == 0 else { throw Malformed(description: "\(buffer.readableBytes) bytes after the last item") }
        }

        mutating func slice(_ what: String) throws(Malformed) -> ByteBuffer {
            guard let length = buffer.readInteger(as: UInt32.self), let slice = buffer.readSlice(length: Int(length)) else {
                throw Malformed(description: "\(what) is cut off")
            }
            return slice
        }

        mutating func string(_ what: String) throws(Malformed) -> String {
            let bytes = try slice(what).readableBytesView
            let string = String(decoding: bytes, as: UTF8.self)
            // Decoding repairs what is not UTF-8: the same bytes came back only if there was none.
            guard string.utf8.elementsEqual(bytes) else { throw Malformed(description: "\(what) is not UTF-8") }
            return string
        }

        /// A write's or an answer's fields, within what a request's head may hold
        /// (`ConnectionLimits`: as many fields, none larger, not more bytes in all).
        mutating func fields(_ what: String) throws(Malformed) -> HTTPFields {
            guard let count = buffer.readInteger(as: UInt16.self) else { throw Malformed(description: "\(what)'s fields are cut off") }
            guard Int(count) <= ConnectionLimits.maxHeaderFields else {
                throw Malformed(description: "\(what) has \(count) fields, more than the \(ConnectionLimits.maxHeaderFields) a request may have")
            }
            var fields = HTTPFields()
            var bytes = 0
            for _ in 0..<count {
                let name = try string("\(what)'s field name")
                guard let fieldName = HTTPField.Name(name) else { throw Malformed(description: "\(what)'s field name `\(name)` is not a token") }
                let value = try string("\(what)'s \(name)")
                guard HTTPField.isValidValue(value) else { throw Malformed(description: "\(what)'s \(name) is not a valid field value") }
                let size = name.utf8.count + value.utf8.count + 4
                bytes += size
                guard size <= ConnectionLimits.maxHeaderFieldBytes, bytes <= ConnectionLimits.maxHeadBytes else {
                    throw Malformed(description: "\(what)'s fields are larger than a request's head may be (\(ConnectionLimits.maxHeaderFieldBytes) bytes a field, \(ConnectionLimits.maxHeadBytes) in all)")
                }
                fields.append(HTTPField(name: fieldName, value: value))
            }
            return fields
        }

        mutating func body(_ what: String) throws(Malformed) -> ByteBuffer {
            try slice("\(what)'s body")
        }
    }
}
