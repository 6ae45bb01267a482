import Foundation

/// The responses a client remembers by ETag, and its counters.
///
/// `@unchecked Sendable`: every stored property is read and written only under `lock`.
final class ResponseCache: @unchecked Sendable {
    struct Entry {
        var etag: String
        var response: AnnouncementsClient.Received
    }

    /// The most responses remembered; the oldest go first.
    static let capacity = 256

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var counters = AnnouncementsClient.Statistics()

    func entry(for key: String) -> Entry? {
        lock.withLock { entries[key] }
    }

    func remember(_ response: AnnouncementsClient.Received, etag: String, for key: String) {
        lock.withLock {
            if entries.updateValue(Entry(etag: etag, response: response), forKey: key) == nil {
                order.append(key)
                if order.count > Self.capacity { entries[order.removeFirst()] = nil }
            }
        }
    }

    func count(bytes: Int, notModified: Bool) {
        lock.withLock {
            counters.requests += 1
            counters.bytesReceived += bytes
            if notModified { counters.notModified += 1 }
        }
    }

    var statistics: AnnouncementsClient.Statistics {
        lock.withLock { counters }
    }
}
