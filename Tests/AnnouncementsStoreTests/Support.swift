import Foundation
@testable import AnnouncementsDomain
@testable import AnnouncementsStore

/// A fresh folder for one test, removed when the value is released.
final class TemporaryFolder: Sendable {
    let path: String

    init() {
        let template = NSTemporaryDirectory() + "announcements-test-XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String {
        path + "/" + name
    }
}

/// Waits for `semaphore` on a thread of its own: on Linux, Swift's tasks and Dispatch's global
/// queue share a few threads (two on a 2-core machine), and a wait on either held one of them,
/// which the store's own queues and every other test need.
func waitOffPool(_ semaphore: DispatchSemaphore) async {
    await withCheckedContinuation { continuation in
        Thread {
            semaphore.wait()
            continuation.resume()
        }.start()
    }
}

/// The lines of a file, without their newlines.
func lines(of path: String) throws -> [String] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
}

/// Appends `text` to the file at `path` as it is (a torn line, a fragment: no newline added).
func appendText(_ text: String, to path: String) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(text.utf8))
    try handle.close()
}

func write(_ lines: [String], to path: String, trailingNewline: Bool = true) throws {
    let text = lines.joined(separator: "\n") + (trailingNewline && !lines.isEmpty ? "\n" : "")
    try text.write(toFile: path, atomically: false, encoding: .utf8)
}

/// Writes events as a sealed log, the way the store does.
func writeLog(_ events: [Event], to path: String) throws {
    var prev: LineHash?
    var text: [UInt8] = []
    for var event in events {
        event.prev = prev
        let line = event.encodedLine()
        prev = LineHash(link: line)
        text += line + [UInt8(ascii: "\n")]
    }
    try Data(text).write(to: URL(fileURLWithPath: path))
}

let t0 = Timestamp(millisecondsSince1970: 1_795_253_400_000)  // 2026-11-21T09:30:00.000Z

/// The time of the sample events' event `seq`: `t0` and `seq` seconds.
func at(_ seq: Int) -> Timestamp {
    Timestamp(millisecondsSince1970: t0.millisecondsSince1970 + Int64(seq) * 1000)
}

func created(_ seq: Int, id: Int, _ title: String, body: String? = nil, by: String = "alice") -> Event {
    Event(seq: seq, id: id, at: Timestamp(millisecondsSince1970: t0.millisecondsSince1970 + Int64(seq) * 1000), by: by,
          change: .created(AnnouncementDraft(title: title, body: body)))
}

func edited(_ seq: Int, id: Int, title: String? = nil, body: BodyChange? = nil, by: String = "bob") -> Event {
    Event(seq: seq, id: id, at: Timestamp(millisecondsSince1970: t0.millisecondsSince1970 + Int64(seq) * 1000), by: by,
          change: .edited(AnnouncementPatch(title: title, body: body)))
}

func deleted(_ seq: Int, id: Int, by: String = "carol") -> Event {
    Event(seq: seq, id: id, at: Timestamp(millisecondsSince1970: t0.millisecondsSince1970 + Int64(seq) * 1000), by: by,
          change: .deleted)
}

/// A log with creates, edits and deletes: ids 1 and 3 live, 2 deleted.
let sampleEvents: [Event] = [
    created(1, id: 1, "Welcome", body: "<p>Hello</p>", by: "seed"),
    created(2, id: 2, "Lunch", body: nil, by: "seed"),
    edited(3, id: 1, title: "Welcome aboard"),
    edited(4, id: 1, body: .set("<p>Hello, world</p>")),
    deleted(5, id: 2),
    created(6, id: 3, "Parking", body: "<p>Level 2</p>"),
    edited(7, id: 3, body: .clear),
]
