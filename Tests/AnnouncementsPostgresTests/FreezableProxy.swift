import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on 127.0.0.1 to the test database that can go silent: once `freeze()`d it passes
/// nothing either way and closes nothing, as a database host that died or a network that dropped
/// every packet (no reset, no answer). Each connection gets two threads that copy its bytes.
final class FreezableProxy: Sendable {
    /// The port it listens on (ephemeral).
    let port: Int
    private let listener: Int32
    private let target: (host: String, port: Int)
    private let frozen = Atomic<Bool>(false)
    private let trigger = Mutex<[UInt8]?>(nil)
    private let stopped = Atomic<Bool>(false)

    init(to host: String, port targetPort: Int) throws {
        target = (host, targetPort)
        let fd = socket(AF_INET, Self.streamType, 0)
        guard fd >= 0 else { throw ProxyError("socket: errno \(errno)") }
        var address = Self.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw ProxyError("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// From now on nothing passes, until `thaw()`.
    func freeze() { frozen.store(true, ordering: .relaxed) }

    /// Freezes once a client has sent `bytes` (passed on to the server; its answer is not), at
    /// that moment whatever the machine's load.
    func freeze(afterClientSends bytes: String) {
        trigger.withLock { $0 = Array(bytes.utf8) }
    }

    func thaw() { frozen.store(false, ordering: .relaxed) }

    /// Stops accepting and ends every connection's copying (their sockets are closed).
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !stopped.load(ordering: .relaxed) {
            guard Self.readable(listener) else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            let server = socket(AF_INET, Self.streamType, 0)
            var address = Self.address(host: target.host, port: target.port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            #if canImport(Darwin)
            // Darwin has no MSG_NOSIGNAL: the sockets themselves are told not to raise SIGPIPE.
            var one: Int32 = 1
            for fd in [client, server] { setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size)) }
            #endif
            let open = Atomic<Int>(2)
            for (from, to) in [(client, server), (server, client)] {
                let thread = Thread { [self] in
                    copy(from: from, to: to, watching: from == client)
                    // The second copier to end closes both sockets.
                    if open.subtract(1, ordering: .relaxed).newValue == 0 {
                        close(client)
                        close(server)
                    }
                }
                thread.start()
            }
        }
    }

    /// Copies `source` to `destination` while not frozen; `watching`, looks for the trigger in
    /// what passes (across reads: the end of the last one is kept).
    private func copy(from source: Int32, to destination: Int32, watching: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var seen: [UInt8] = []
        while !stopped.load(ordering: .relaxed) {
            if frozen.load(ordering: .relaxed) {
                usleep(10_000)
                continue
            }
            // (Frozen while it polled: nothing read passes.)
            guard Self.readable(source), !frozen.load(ordering: .relaxed) else { continue }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if watching, let trigger = trigger.withLock({ $0 }) {
                seen += buffer[..<count]
                if seen.count >= trigger.count, (0...(seen.count - trigger.count)).contains(where: { seen[$0..<($0 + trigger.count)].elementsEqual(trigger) }) {
                    frozen.store(true, ordering: .relaxed)
                    self.trigger.withLock { $0 = nil }
                }
                seen = Array(seen.suffix(trigger.count))
            }
            var sent = 0
            while sent < count {
                // Not write(): a peer that closed its end would raise SIGPIPE, ending the test process.
                let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress.map { $0 + sent }, count - sent, Self.noSignal) }
                guard written > 0 else { return }
                sent += written
            }
        }
        shutdown(destination, Int32(SHUT_WR))
    }

    /// Whether `fd` has something to read (or an end) within 20 ms.
    private static func readable(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 20) > 0
    }

    /// An IPv4 address (the test database is on loopback).
    private static func address(host: String = "127.0.0.1", port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
        return address
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0
    #endif

    struct ProxyError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
