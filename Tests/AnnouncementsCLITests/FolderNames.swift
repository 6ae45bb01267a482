#if canImport(Glibc)
import Glibc

/// The names given in a folder (created, linked or moved in) while it is watched, through Linux's
/// inotify: what a test of a file that must never be named looks at, where the file being gone
/// afterwards says nothing of a moment it had its name.
final class FolderNames {
    private let descriptor: Int32

    init(watching folder: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0, inotify_add_watch(descriptor, folder, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            throw FolderNamesError(message: "cannot watch \(folder): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
    }

    /// The names given since the watch began (or the last call).
    func made() -> [String] {
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                let start = offset + MemoryLayout<inotify_event>.size
                let name = buffer[start..<min(start + length, count)].prefix { $0 != 0 }
                names.append(String(decoding: name, as: UTF8.self))
                offset = start + length
            }
        }
    }
}

struct FolderNamesError: Error {
    var message: String
}
#else
/// Watching a folder's names needs Linux's inotify: elsewhere, the watch sees nothing.
final class FolderNames {
    init(watching folder: String) throws {
        print("FolderNames: no inotify on this system; the check that a name was never given only runs on Linux")
    }

    func made() -> [String] { [] }
}
#endif
