import AnnouncementsDomain
import AnnouncementsStore
import NIOCore

/// `/health`'s JSON, made once per state and thread: the head's hex and the JSON are written when
/// the head or the health changes, not for each of the thousands of checks a load balancer makes
/// between; each thread keeps its own (`ThreadSlots`), so that a check takes no lock and writes
/// no count that another core's checks take and write too.
final class HealthBody: Sendable {
    private struct Kept {
        var seq: Int
        var health: StoreHealth
        var body: ByteBuffer
    }

    private let kept = ThreadSlots<Kept?> { _ in nil }

    /// The body for `health` at log position `seq`; `head` (the log's head at `seq` or later) is
    /// read only when this thread keeps no body for both.
    func body(_ health: StoreHealth, seq: Int, head: () -> LogHead?) -> ByteBuffer {
        let body = kept.withCallersSlot { kept in kept.flatMap { $0.seq == seq && $0.health == health ? $0.body : nil } }
        if let body { return body }
        let head = head()
        let made = ByteBuffer(bytes: Self.encode(health, head))
        kept.withCallersSlot { $0 = Kept(seq: head?.seq ?? 0, health: health, body: made) }
        return made
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
