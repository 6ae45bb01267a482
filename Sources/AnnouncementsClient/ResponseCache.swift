import Foundation

/// The responses a client remembers by ETag, and its counters.
///
/// `@unchecked Sendable`: every stored property is read and written only under `lock`.
final class ResponseCache: @unchecked Sendable {
    struct Entry {
        var etag: String
        var response: AnnouncementsClient.Received
    }

    /// The most responses remembered, and the most bytes of their bodies: the oldest go first.
    /// A body larger than a quarter of `budget` is not kept (a v1 page of long bodies can be
    /// megabytes; an app's memory is not the place for many of them).
    static let capacity = 256
    static let defaultBudget = 16 << 20

    let budget: Int
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    private var bytes = 0
    private var counters = AnnouncementsClient.Statistics()

    init(budget: Int = ResponseCache.defaultBudget) {
        self.budget = budget
    }

    func entry(for key: String) -> Entry? {
        lock.withLock { entries[key] }
    }

    func remember(_ response: AnnouncementsClient.Received, etag: String, for key: String) {
        lock.withLock {
            forget(key)
            guard response.data.count <= budget / 4 else { return }
            entries[key] = Entry(etag: etag, response: response)
            order.append(key)
            bytes += response.data.count
            while order.count > Self.capacity || bytes > budget { forget(order[0]) }
        }
    }

    /// Drops every response kept (what one caller may read is not another's).
    func forgetAll() {
        lock.withLock {
            entries.removeAll()
            order.removeAll()
            bytes = 0
        }
    }

    /// The bytes of the bodies kept (for tests).
    var keptBytes: Int {
        lock.withLock { bytes }
    }

    /// Drops what is kept for `key` (called under `lock`).
    private func forget(_ key: String) {
        guard let old = entries.removeValue(forKey: key) else { return }
        bytes -= old.response.data.count
        order.removeAll { $0 == key }
    }

    /// More of a response already counted (the event stream's next chunk).
    func count(moreBytes bytes: Int) {
        lock.withLock { counters.bytesReceived += bytes }
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
