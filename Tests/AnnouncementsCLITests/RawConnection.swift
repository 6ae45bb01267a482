import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP connection to the server on 127.0.0.1 that sends and reads raw bytes: for what HTTP
/// clients will not do (send slowly, stall, break the protocol, sit idle).
final class RawConnection {
    private let fd: Int32

    /// With `receiveBuffer`, the socket's receive buffer is that small: a client that reads slowly.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = tcpSocket()
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        if var receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Closes this side for sending (a FIN), keeping the socket open to read.
    func closeSending() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// The connection's port on this side.
    var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Sends `text`; false once the server has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            #if canImport(Glibc)
            let result = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #else
            let result = bytes[sent...].withUnsafeBytes { Darwin.send(fd, $0.baseAddress, $0.count, 0) }
            #endif
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            sent += result
        }
        return true
    }

    /// Reads until the server closes the connection or `seconds` pass: what arrived, and whether
    /// the server closed it.
    func readUntilClosed(seconds: Double) async -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0 {
            guard let chunk = await read() else { return (String(decoding: received, as: UTF8.self), true) }
            received += chunk
        }
        let rest = arrived()
        return (String(decoding: received + rest.bytes, as: UTF8.self), rest.closed)
    }

    /// Reads one response whose body has a Content-Length, waiting at most `seconds`.
    func readResponse(seconds: Double) async -> String {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0 {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let length = text[..<end.lowerBound].split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return text }
            }
            guard let chunk = await read() else { return String(decoding: received, as: UTF8.self) }
            received += chunk
        }
        return String(decoding: received + arrived().bytes, as: UTF8.self)
    }

    /// Reads until the server closes the connection or `seconds` pass, blocking the calling
    /// thread: for a thread of the test's own (never a task), which must see the answer in time
    /// however busy the cooperative pool is.
    func readUntilClosedBlocking(seconds: Double) -> String {
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while deadline.timeIntervalSinceNow > 0 {
            guard poll(&poller, 1, 50) > 0 else { continue }
            guard let chunk = receive() else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// What has arrived: bytes, nil once the connection is closed. When nothing has, it waits a
    /// little and looks again, without holding a thread: a test that blocked on the socket held
    /// one of the cooperative pool's few threads, which every in-process server of the other
    /// tests needs, for as long as it waited.
    /// (An empty read, after such a wait, lets the caller look at its deadline.)
    func read() async -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else {
            try? await Task.sleep(for: .milliseconds(20))
            return []
        }
        return receive()
    }

    /// Everything that has arrived, without waiting, and whether the connection is closed. A reader
    /// whose deadline has passed takes this last: its task may have waited for a thread longer
    /// than its server took to answer (every test's task shares the pool's few threads), and
    /// what arrived while it waited counts. With `limit`, it stops once it has that many bytes (or
    /// a little more): a sender as fast as the reader would otherwise keep it reading.
    func arrived(atMost limit: Int = .max) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while bytes.count < limit, poll(&poller, 1, 0) > 0 {
            guard let chunk = receive() else { return (bytes, true) }
            bytes += chunk
        }
        return (bytes, false)
    }

    /// One `recv` of what is there: nil when the connection is closed.
    private func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Array(buffer[..<count])
    }
}

/// A new IPv4 TCP socket's descriptor (negative when none can be made): `SOCK_STREAM` is an enum
/// case in Glibc and a plain `Int32` on Darwin.
func tcpSocket() -> Int32 {
    #if canImport(Glibc)
    socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    socket(AF_INET, SOCK_STREAM, 0)
    #endif
}
