import AnnouncementsDomain
import AnnouncementsStore
import NIOCore
import Synchronization

/// `/health`'s JSON, made once per state: the head's hex and the JSON are written when the head
/// or the health changes, not for each of the thousands of checks a load balancer makes between.
final class HealthBody: Sendable {
    private struct Cached {
        var health: StoreHealth
        var head: LogHead?
        var body: ByteBuffer
    }

    private let cached = Mutex<Cached?>(nil)

    /// The body for `health` and `head`.
    func body(_ health: StoreHealth, _ head: LogHead?) -> ByteBuffer {
        if let cached = cached.withLock({ $0 }), cached.health == health, cached.head == head { return cached.body }
        let body = ByteBuffer(bytes: Self.encode(health, head))
        cached.withLock { $0 = Cached(health: health, head: head, body: body) }
        return body
    }

    /// `{"status":"ok","seq":6,"head":"6:<sha256>"}`; while writes cannot succeed,
    /// `"status":"degraded"` and the `reason`. `head` is null for an empty log.
    static func encode(_ health: StoreHealth, _ head: LogHead?) -> [UInt8] {
        var json = JSONBytes()
        json.raw(#"{"status":"#)
        json.string(health.isOK ? "ok" : "degraded")
        if let reason = health.reason {
            json.raw(#","reason":"#)
            json.string(reason)
        }
        json.raw(#","seq":"#)
        json.integer(head?.seq ?? 0)
        json.raw(#","head":"#)
        if let head { json.string(head.description) } else { json.raw("null") }
        json.raw("}")
        return json.bytes
    }
}
