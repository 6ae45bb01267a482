import AnnouncementsDomain
import AnnouncementsStore
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// `GET /events` as Server-Sent Events: every stored event after a seq, then each new one as it is
/// appended; `id:` is the seq (so a client resumes with `Last-Event-ID`), `event:` the type, `data:`
/// the line exactly as stored, or its public form (see `FeedForm`). A comment line every `heartbeat` (15 seconds by default) keeps idle
/// connections open.
///
/// The stream reads every event back from the log (at most a page at a time), so it holds nothing
/// in memory for a slow client and never slows writers or other clients: a client that cannot keep
/// up simply reads further behind, and catches up at its own pace. It ends when the client goes
/// away or the server shuts down.
struct EventStream: Sendable {
    let store: EventStore
    let after: Int
    /// The full lines, or their public form.
    let form: FeedForm
    /// Idle time between heartbeats.
    let heartbeat: Duration
    /// Pages already framed by other streams.
    let frames: Frames
    /// This stream's place among those allowed, held while its response lives.
    let slot: StreamSlots.Slot
    /// The connection's closing: a stream whose client left ends (and gives back its place) at
    /// once, not at its next write.
    let closure: ConnectionClosure

    /// The stream: never kept by a cache, and never held back by a proxy that buffers answers
    /// (`X-Accel-Buffering: no`: nginx's default `proxy_buffering on` held every event back).
    func response() -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store", .xAccelBuffering: "no", .vary: "Accept, Authorization, Last-Event-ID"]
        return Response(status: .ok, headers: headers, body: ResponseBody { [slot] writer in
            // Its place is what the metrics count as an open stream.
            defer { slot.release() }
            var last = after
            // Tell the client at once that the stream is open, before any event.
            try await writer.write(ByteBuffer(string: ": following the log after \(last)\n\n"))
            following: while !Task.isCancelled, !Task.isShuttingDownGracefully, !closure.isClosed {
                let page: FramedPage?
                do {
                    page = try await nextPage(after: last)
                } catch let error as APIError {
                    // The answer has begun: say why in a comment, and end the stream.
                    try await writer.write(ByteBuffer(string: ": error: \(error.message)\n\n"))
                    break following
                }
                if let page {
                    try await writer.write(page.framed)
                    last += page.count
                    // Caught up: let new events gather before reading again (see followerPause).
                    guard let pause = page.pause else { continue }
                    try? await Task.sleep(for: pause)
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

    /// The events after a seq, framed: how many, and the pause the store asks for after them.
    private struct FramedPage {
        var framed: ByteBuffer
        var count: Int
        var pause: Duration?
    }

    /// The events after `seq`, framed; nil when there are none yet. The lines read (slices of a
    /// page of the log, megabytes) are let go before the frames are written, however slowly.
    private func nextPage(after seq: Int) async throws -> FramedPage? {
        // Counted before the read: lines read while an erasure runs are framed as from before it.
        let erasures = store.erasureCount
        let read = try await store.followerLines(after: seq)
        guard !read.lines.isEmpty else { return nil }
        return FramedPage(framed: try frames.framed(read.lines, after: seq, form: form, erasures: erasures), count: read.lines.count, pause: read.pause)
    }

    /// Waits for events after `seq`, at most a heartbeat's time; `stop` when the server shuts down
    /// or the connection closes.
    private func next(after seq: Int) async -> Wake {
        let (store, heartbeat, closure) = (self.store, self.heartbeat, self.closure)
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
                group.addTask {
                    await closure.wait()
                    return .stop
                }
                let first = try await group.next() ?? .stop
                group.cancelAll()
                return first
            }
        }
        return wake ?? .stop
    }

    /// The Server-Sent Events framing of the feed's pages, kept for the streams that send the same
    /// page (followers at the same place, see `EventStore.followerLines`): each page is framed once.
    final class Frames: Sendable {
        private struct Page: Hashable {
            var after: Int
            var count: Int
            var form: FeedForm
            /// The store's erasures when it was framed: a page framed before an erasure may hold
            /// what it erased, and is not served after it.
            var erasures: Int
        }

        private struct State {
            var pages: [Page: ByteBuffer] = [:]
            var order: [Page] = []
            var bytes = 0
        }

        private let state = Mutex(State())
        /// At most this many bytes of framed pages are kept (a larger page is not kept at all).
        static let byteLimit = 32 << 20

        /// `lines`, the events after `after`, as Server-Sent Events in `form`.
        func framed(_ lines: [ArraySlice<UInt8>], after: Int, form: FeedForm, erasures: Int) throws(APIError) -> ByteBuffer {
            let page = Page(after: after, count: lines.count, form: form, erasures: erasures)
            if let kept = state.withLock({ $0.pages[page] }) { return kept }
            let lines = try form.lines(lines, after: after)
            var buffer = ByteBuffer()
            buffer.reserveCapacity(lines.reduce(0) { $0 + $1.count + 48 })
            for (offset, line) in lines.enumerated() {
                EventStream.append(line, seq: after + offset + 1, to: &buffer)
            }
            let size = buffer.readableBytes
            guard size <= Self.byteLimit else { return buffer }
            state.withLock { state in
                guard state.pages[page] == nil else { return }
                while state.bytes + size > Self.byteLimit, !state.order.isEmpty {
                    state.bytes -= state.pages.removeValue(forKey: state.order.removeFirst())?.readableBytes ?? 0
                }
                state.pages[page] = buffer
                state.order.append(page)
                state.bytes += size
            }
            return buffer
        }
    }

    /// Appends one event's frame, `id: <seq>\nevent: <type>\ndata: <line>\n\n`. A stored line is
    /// one line of JSON, so one `data:` field holds it.
    fileprivate static func append(_ line: ArraySlice<UInt8>, seq: Int, to buffer: inout ByteBuffer) {
        buffer.writeStaticString("id: ")
        buffer.writeString(String(seq))
        buffer.writeStaticString("\nevent: ")
        if let type = Event.storedType(inLine: line) {
            buffer.writeBytes(type)
        } else {
            buffer.writeString((try? EventParser.parse(line))?.type.rawValue ?? "message")
        }
        buffer.writeStaticString("\ndata: ")
        buffer.writeBytes(line)
        buffer.writeStaticString("\n\n")
    }
}
