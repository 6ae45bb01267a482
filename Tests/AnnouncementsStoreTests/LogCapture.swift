import Logging
import Synchronization

/// A logger whose entries a test reads back: what a store warned about, and with which metadata.
final class LogCapture: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let entries = Mutex<[Entry]>([])

    var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    var warnings: [Entry] { entries.withLock { $0.filter { $0.level == .warning } } }

    /// The entries whose message contains `text`.
    func entries(containing text: String) -> [Entry] {
        entries.withLock { $0.filter { $0.message.contains(text) } }
    }

    fileprivate func add(_ entry: Entry) {
        entries.withLock { $0.append(entry) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.add(Entry(level: event.level, message: event.message.description, metadata: merged.mapValues(\.description)))
        }
    }
}
