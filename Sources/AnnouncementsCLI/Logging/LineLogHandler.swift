import AnnouncementsDomain
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Log lines on stderr: `2026-11-23T21:09:44.123Z info announcements: message key=value …`.
///
/// Made for the access log's rate (one line per request): the time is the store's own UTC
/// formatting (no `localtime`, which reads the time zone for each call, and no `strftime`), and
/// each line leaves in one `write(2)`, whole, so that lines from two threads never interleave.
struct LineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = Timestamp.now().description
        line += " "
        line += event.level.rawValue
        line += " "
        line += label
        line += ": "
        line += "\(event.message)"
        for (key, value) in merged(event.metadata).sorted(by: { $0.key < $1.key }) {
            line += " "
            line += key
            line += "="
            line += "\(value)"
        }
        line += "\n"
        Self.emit(line)
    }

    /// The handler's metadata, the provider's, then the call's (later ones win).
    private func merged(_ call: Logger.Metadata?) -> Logger.Metadata {
        var all = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { all.merge(provided) { $1 } }
        if let call, !call.isEmpty { all.merge(call) { $1 } }
        return all
    }

    /// Writes the whole line to stderr (retrying a short or interrupted write).
    private static func emit(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
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
}
