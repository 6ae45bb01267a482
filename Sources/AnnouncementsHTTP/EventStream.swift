import AnnouncementsCore
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /events` as Server-Sent Events: every stored event after a seq, then each new one as it is
/// appended; `id:` is the seq (so a client resumes with `Last-Event-ID`), `event:` the type, `data:`
/// the line exactly as stored. A comment line every `heartbeat` (15 seconds by default) keeps idle
/// connections open.
///
/// The stream reads every event back from the log (at most a page at a time), so it holds nothing
/// in memory for a slow client and never slows writers or other clients: a client that cannot keep
/// up simply reads further behind, and catches up at its own pace. It ends when the client goes
/// away or the server shuts down.
struct EventStream: Sendable {
    let store: EventStore
    let after: Int
    /// Idle time between heartbeats.
    let heartbeat: Duration

    static func isRequested(by request: Request) -> Bool {
        request.headers[.accept]?.lowercased().contains("text/event-stream") == true
    }

    func response() -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            var last = after
            // Tell the client at once that the stream is open, before any event.
            try await writer.write(ByteBuffer(string: ": following the log after \(last)\n\n"))
            following: while !Task.isCancelled, !Task.isShuttingDownGracefully {
                let read = try await store.followerLines(after: last)
                if !read.lines.isEmpty {
                    var buffer = ByteBuffer()
                    for line in read.lines {
                        last += 1
                        Self.append(line, seq: last, to: &buffer)
                    }
                    try await writer.write(buffer)
                    if !read.isCaughtUp { continue }
                    // Caught up: let new events gather before reading again (see followerPause).
                    try? await Task.sleep(for: EventStore.followerPause)
                    continue
                }
                switch await next(after: last) {
                case .events: continue
                case .heartbeat: try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                case .stop: break following
                }
            }
            try await writer.finish(nil)
        })
    }

    private enum Wake: Sendable {
        case events, heartbeat, stop
    }

    /// Waits for events after `seq`, at most a heartbeat's time; `stop` when the server shuts down.
    private func next(after seq: Int) async -> Wake {
        let (store, heartbeat) = (self.store, self.heartbeat)
        let wake = try? await cancelWhenGracefulShutdown { () async throws -> Wake in
            try await withThrowingTaskGroup(of: Wake.self) { group in
                group.addTask {
                    await store.waitForEvents(after: seq)
                    return .events
                }
                group.addTask {
                    try await Task.sleep(for: heartbeat)
                    return .heartbeat
                }
                let first = try await group.next() ?? .stop
                group.cancelAll()
                return first
            }
        }
        return wake ?? .stop
    }

    /// `id: <seq>\nevent: <type>\ndata: <line>\n\n`. A stored line is one line of JSON, so one
    /// `data:` field holds it.
    private static func append(_ line: ArraySlice<UInt8>, seq: Int, to buffer: inout ByteBuffer) {
        buffer.writeString("id: \(seq)\nevent: \(type(of: line))\ndata: ")
        buffer.writeBytes(line)
        buffer.writeString("\n\n")
    }

    /// The event's type: found where the store writes it, else parsed (a hand-made line).
    private static func type(of line: ArraySlice<UInt8>) -> String {
        let marker = Array(#","type":""#.utf8)
        if let start = line.firstRange(of: marker)?.upperBound,
           let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) {
            return String(decoding: line[start..<end], as: UTF8.self)
        }
        return (try? EventParser.parse(line))?.type.rawValue ?? "message"
    }
}
