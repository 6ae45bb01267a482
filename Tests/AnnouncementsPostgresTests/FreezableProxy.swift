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
    /// Every connection it has open.
    private let links = Mutex<[Link]>([])

    /// One connection through the proxy: whether its client has sent `LISTEN` (a node's
    /// listener), and whether it alone is frozen.
    private final class Link: Sendable {
        let listens = Atomic<Bool>(false)
        let frozen = Atomic<Bool>(false)
    }

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

    /// Freezes, for good, the connections open now whose client has sent `LISTEN` (a node's
    /// listener), as a half-open path would; the others, and those opened later, go on. Returns
    /// how many it froze.
    func freezeListeners() -> Int {
        let listeners = links.withLock { $0.filter { $0.listens.load(ordering: .relaxed) } }
        for link in listeners { link.frozen.store(true, ordering: .relaxed) }
        return listeners.count
    }

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
            let link = Link()
            links.withLock { $0.append(link) }
            for (from, to) in [(client, server), (server, client)] {
                let thread = Thread { [self] in
                    copy(from: from, to: to, link: link, watching: from == client)
                    // The second copier to end closes both sockets.
                    if open.subtract(1, ordering: .relaxed).newValue == 0 {
                        close(client)
                        close(server)
                        links.withLock { $0.removeAll { $0 === link } }
                    }
                }
                thread.start()
            }
        }
    }

    /// Copies `source` to `destination` while neither the proxy nor `link` is frozen; `watching`
    /// (the client's side), looks for the trigger and for `LISTEN` in what passes (across reads:
    /// the end of the last one is kept).
    private func copy(from source: Int32, to destination: Int32, link: Link, watching: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var seen: [UInt8] = []
        let isFrozen = { self.frozen.load(ordering: .relaxed) || link.frozen.load(ordering: .relaxed) }
        while !stopped.load(ordering: .relaxed) {
            if isFrozen() {
                usleep(10_000)
                continue
            }
            // (Frozen while it polled: nothing read passes.)
            guard Self.readable(source), !isFrozen() else { continue }
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            if watching, !link.listens.load(ordering: .relaxed), Self.contains(buffer[..<count], Self.listenBytes) {
                link.listens.store(true, ordering: .relaxed)
            }
            if watching, let trigger = trigger.withLock({ $0 }) {
                seen += buffer[..<count]
                if Self.contains(seen[...], trigger) {
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

    /// What a listener's client sends (postgres-nio's `LISTEN "channel";`, in one read).
    private static let listenBytes = Array(#"LISTEN ""#.utf8)

    private static func contains(_ bytes: ArraySlice<UInt8>, _ part: [UInt8]) -> Bool {
        guard bytes.count >= part.count else { return false }
        return (bytes.startIndex...(bytes.endIndex - part.count)).contains { bytes[$0..<($0 + part.count)].elementsEqual(part) }
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
