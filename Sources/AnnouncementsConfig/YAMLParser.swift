import AnnouncementsDomain
import CYaml

/// Turns YAML text into a `YAMLNode` tree with libyaml's event parser.
/// The only file that touches libyaml: every C object is freed with `defer`.
enum YAMLParser {
    /// Parses one document; nil for an empty file. Throws for malformed YAML, several documents,
    /// or YAML past `ConfigLimits`' nesting and alias limits, which is found at the event past them.
    static func parse(_ text: String) throws(YAMLError) -> YAMLNode? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw YAMLError(message: "cannot start the YAML parser (out of memory)", mark: YAMLMark(line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer throws(YAMLError) in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = YAMLTreeBuilder()
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { throw syntaxError(parser, in: buffer) }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { break }
                try handle(event, with: &builder)
            }
            return builder.document
        }
    }

    private static func handle(_ event: yaml_event_t, with builder: inout YAMLTreeBuilder) throws(YAMLError) {
        let mark = YAMLMark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
        // A tag (`!!str 8080`, `!!binary …`) would change what a value means, which this reader
        // does not do: it is refused rather than ignored.
        let tag = switch event.type {
        case YAML_SCALAR_EVENT: event.data.scalar.tag
        case YAML_MAPPING_START_EVENT: event.data.mapping_start.tag
        case YAML_SEQUENCE_START_EVENT: event.data.sequence_start.tag
        default: UnsafeMutablePointer<yaml_char_t>?.none
        }
        if tag != nil {
            // (The tag is not quoted: a token or a password may start with `!`.)
            throw YAMLError(message: "a YAML tag (a value that starts with `!`) is not supported: write the value without it, or in quotes if it is text", mark: mark)
        }
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            try builder.documentStart(at: mark)
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
            builder.scalar(text, isPlain: scalar.style == YAML_PLAIN_SCALAR_STYLE, anchor: scalar.anchor.map { String(cString: $0) }, at: mark)
        case YAML_ALIAS_EVENT:
            try builder.alias(event.data.alias.anchor.map { String(cString: $0) } ?? "", at: mark)
        case YAML_MAPPING_START_EVENT:
            try builder.collectionStart(isMapping: true, anchor: event.data.mapping_start.anchor.map { String(cString: $0) }, at: mark)
        case YAML_SEQUENCE_START_EVENT:
            try builder.collectionStart(isMapping: false, anchor: event.data.sequence_start.anchor.map { String(cString: $0) }, at: mark)
        case YAML_MAPPING_END_EVENT, YAML_SEQUENCE_END_EVENT:
            try builder.collectionEnd(at: mark)
        default:
            break
        }
    }

    /// libyaml's error, at its place in `bytes`. One in a quoted scalar or a flow collection
    /// left open is placed where that began, which is what to mend: where libyaml found the
    /// problem (often the end of the file) is said in words. Others are placed where libyaml
    /// found them (a key indented wrong, in a mapping that began lines before it, is on its own line). A reader's error (a
    /// character YAML does not allow) has no mark, only the byte offset and the character: its
    /// line and column are counted here, and the character named.
    private static func syntaxError(_ parser: yaml_parser_t, in bytes: UnsafeBufferPointer<UInt8>) -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "malformed YAML"
        let context = parser.context.map { String(cString: $0) + ": " } ?? ""
        guard parser.error == YAML_READER_ERROR else {
            let found = YAMLMark(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
            let begun = YAMLMark(line: Int(parser.context_mark.line) + 1, column: Int(parser.context_mark.column) + 1)
            let leftOpen = context.contains("quoted scalar") || context.contains("flow")
            guard leftOpen, begun.line < found.line else {
                return YAMLError(message: "malformed YAML: \(context)\(problem)", mark: found)
            }
            return YAMLError(message: "malformed YAML: \(context)\(problem) (at line \(found.line), column \(found.column))", mark: begun)
        }
        var message = "malformed YAML: \(context)\(problem)"
        if parser.problem_value >= 0, let scalar = Unicode.Scalar(UInt32(parser.problem_value)) { message += " (\(CharacterPlace.codePoint(scalar)))" }
        return YAMLError(message: message, mark: YAMLMark(ofByte: Int(parser.problem_offset), in: bytes))
    }
}
