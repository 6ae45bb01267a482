import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `serve` will listen, tried before the log is opened: a host that does not resolve, or an
/// address this machine will not bind (in use, privileged, not its own), stops it before anything
/// is made on disk. (Found only by the server's own bind, a first run made and seeded a new log,
/// and wrote its snapshot, before it said so.)
enum ListenAddress {
    /// Resolves `host` and binds a socket of its own to the address, then closes it: throws the
    /// `SocketAddressError` or `IOError` the server's bind would. (Its close leaves nothing
    /// behind: it never listened.)
    static func check(host: String, port: Int) throws {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let family = switch address {
        case .v4: AF_INET
        case .v6: AF_INET6
        case .unixDomainSocket: AF_UNIX
        }
        #if canImport(Glibc) || canImport(Musl)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        #endif
        // Without a socket to try with, the server's own bind says what is wrong.
        guard fd >= 0 else { return }
        defer { close(fd) }
        // As the server binds: an address whose last connections linger is free.
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let code = address.withSockAddr { pointer, size in bind(fd, pointer, socklen_t(size)) == 0 ? 0 : errno }
        guard code == 0 else { throw IOError(errnoCode: code, reason: "bind") }
    }
}
