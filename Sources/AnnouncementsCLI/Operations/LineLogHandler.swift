import AnnouncementsConfig
import AnnouncementsDomain
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines on stderr, as text for people or as JSON for a log pipeline:
///
///     2026-11-23T21:09:44.123Z info announcements: message key=value …
///     {"time":"2026-11-23T21:09:44.123Z","level":"info","label":"announcements","message":"…","key":"value",…}
///
/// A JSON line is one object with the keys `time`, `level`, `label` and `message`, then each
/// metadata key (sorted; every value a string). A text line leaves out the access log's request
/// fields (`http.method`, `http.path`, `http.status`, `http.duration_ms`, `http.bytes`), which its
/// message already states.
///
/// Made for the access log's rate (one line per request): the time is the store's own UTC
/// formatting (no `localtime`, which reads the time zone for each call, and no `strftime`), and
/// each line leaves in one `write(2)`, whole, so that lines from two threads never interleave.
struct LineLogHandler: LogHandler {
    let label: String
    let format: Configuration.LogFormat
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, level: Logger.Level, format: Configuration.LogFormat = .text, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = merged(event.metadata).sorted(by: { $0.key < $1.key })
        switch format {
        case .text:
            var line = text(event, fields)
            line.withUTF8 { Self.emit(UnsafeRawBufferPointer($0)) }
        case .json:
            json(event, fields).withUnsafeBytes(Self.emit)
        }
    }

    private func text(_ event: LogEvent, _ fields: [(key: String, value: Logger.MetadataValue)]) -> String {
        var line = Timestamp.now().description
        line += " "
        line += event.level.rawValue
        line += " "
        line += label
        line += ": "
        line += "\(event.message)"
        for (key, value) in fields where !Self.statedInMessage.contains(key) {
            line += " "
            line += key
            line += "="
            line += "\(value)"
        }
        line += "\n"
        return line
    }

    private func json(_ event: LogEvent, _ fields: [(key: String, value: Logger.MetadataValue)]) -> [UInt8] {
        var json = JSONBytes()
        json.raw(#"{"time":"#)
        json.string(Timestamp.now().description)
        json.raw(#","level":"#)
        json.string(event.level.rawValue)
        json.raw(#","label":"#)
        json.string(label)
        json.raw(#","message":"#)
        json.string("\(event.message)")
        for (key, value) in fields where !Self.reservedKeys.contains(key) {
            json.raw(",")
            json.string(key)
            json.raw(":")
            json.string("\(value)")
        }
        json.raw("}\n")
        return json.bytes
    }

    /// The access log's fields that its text message states.
    private static let statedInMessage: Set<String> = ["http.method", "http.path", "http.status", "http.duration_ms", "http.bytes"]

    /// The keys a JSON line sets itself; metadata of the same name is left out.
    private static let reservedKeys: Set<String> = ["time", "level", "label", "message"]

    /// The handler's metadata, the provider's, then the call's (later ones win).
    private func merged(_ call: Logger.Metadata?) -> Logger.Metadata {
        var all = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { all.merge(provided) { $1 } }
        if let call, !call.isEmpty { all.merge(call) { $1 } }
        return all
    }

    /// Writes the whole line to stderr (retrying a short or interrupted write).
    private static func emit(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
