import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A benchmark that could not run or read its input, naming the file (and line) and the reason,
/// so that `make bench` stops with a message saying what to fix instead of a figure that lies.
struct BenchError: Error, CustomStringConvertible {
    /// The file the problem is in, as given.
    var path: String
    /// The 1-based line, when the problem is on one line of a file.
    var line: Int?
    /// What is wrong.
    var message: String

    init(path: String, line: Int? = nil, _ message: String) {
        self.path = path
        self.line = line
        self.message = message
    }

    /// The failed system call `call` on `path`, with the current `errno`'s text.
    static func system(_ call: String, path: String) -> BenchError {
        let code = errno
        return BenchError(path: path, "\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }

    var description: String {
        line.map { "\(path):\($0): \(message)" } ?? "\(path): \(message)"
    }
}

extension BenchError {
    /// Creates `path` and its parents when missing; an error names the folder and the system's reason.
    static func createFolder(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // Foundation's own message ("The file doesn't exist.") hides which part failed and why.
            let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.localizedDescription ?? error.localizedDescription
            throw BenchError(path: path, "cannot create the folder: \(reason)")
        }
    }
}
