/// A write's JSON body (`{"title": …, "body": …}`), read in one pass by the scanner that reads the
/// log: the title as a `String`, the body as `JSONText` (checked and copied in the store's escaping,
/// never decoded), and what is wrong with the rest.
///
/// The HTTP layer decides what each finding means for its caller (400 or 422); this only reads.
public struct WriteFields: Sendable {
    /// What a field of the object held.
    public enum Field<Value: Sendable>: Sendable {
        case absent
        case null
        case value(Value)
        /// A JSON value of another type (a number, an array…).
        case wrongType
    }

    /// Why a body is not an object of fields: what the caller can fix.
    public enum Problem: Error, Sendable, Hashable {
        /// Not JSON; the message says where (`invalid JSON at column 17: …`).
        case notJSON(String)
        /// JSON, but not an object.
        case notObject
        /// The first field name the object repeats (compared after decoding escapes).
        case repeated(String)
        /// The first field, in name order, that is neither `title` nor `body`.
        case unknown(String)
    }

    public var title: Field<String> = .absent
    public var body: Field<JSONText> = .absent

    /// Reads `bytes`: a syntax error anywhere comes first, then a repeated field, then an unknown one.
    public static func read(_ bytes: UnsafeRawBufferPointer) throws(Problem) -> WriteFields {
        var scanner = JSONScanner(bytes)
        var names = FieldNames()
        let fields: WriteFields?
        do throws(LineProblem) {
            fields = try scanner.writeFields(&names)
        } catch {
            throw .notJSON(error.message)
        }
        guard let fields else { throw .notObject }
        if let repeated = names.repeated { throw .repeated(String(decoding: repeated, as: UTF8.self)) }
        if let first = names.unknown.map({ String(decoding: $0, as: UTF8.self) }).min() { throw .unknown(first) }
        return fields
    }

    /// The names an object's fields had, as read (a set: a body may name half a million fields,
    /// and comparing each name with every one before it took minutes).
    fileprivate struct FieldNames {
        var all: Set<[UInt8]> = []
        var repeated: [UInt8]?
        var unknown: [[UInt8]] = []
    }
}

extension JSONScanner {
    /// Reads a whole JSON text: the fields when it is an object, nil when it is another value.
    fileprivate mutating func writeFields(_ names: inout WriteFields.FieldNames) throws(LineProblem) -> WriteFields? {
        skipWhitespace()
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 0)
            try expectEnd()
            return nil
        }
        var fields = WriteFields()
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            try expectEnd()
            return fields
        }
        while true {
            skipWhitespace()
            let name = try stringBytes(field: nil) { Array($0) }
            if !names.all.insert(name).inserted, names.repeated == nil { names.repeated = name }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw syntax("expected ':' after a field name") }
            index += 1
            skipWhitespace()
            if name.elementsEqual("title".utf8) {
                fields.title = try field { scanner throws(LineProblem) in try scanner.string(field: "title") }
            } else if name.elementsEqual("body".utf8) {
                fields.body = try field { scanner throws(LineProblem) in try scanner.text(field: "body") }
            } else {
                names.unknown.append(name)
                try skipValue(depth: 1)
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                try expectEnd()
                return fields
            default:
                throw syntax("expected ',' or '}' in an object")
            }
        }
    }

    /// A field's value: null, a string read by `read`, or any other value, skipped.
    fileprivate mutating func field<Value>(_ read: (inout JSONScanner) throws(LineProblem) -> Value) throws(LineProblem) -> WriteFields.Field<Value> {
        switch peek() {
        case UInt8(ascii: "\""): return .value(try read(&self))
        case UInt8(ascii: "n") where null(): return .null
        default:
            try skipValue(depth: 1)
            return .wrongType
        }
    }

    /// Nothing but whitespace may follow the value.
    fileprivate mutating func expectEnd() throws(LineProblem) {
        skipWhitespace()
        guard isAtEnd else { throw syntax("unexpected characters after the value") }
    }
}
