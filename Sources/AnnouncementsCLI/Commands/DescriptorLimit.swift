#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import AnnouncementsConfig

/// The process's limit on open descriptors, which bounds how many connections the server can hold.
enum DescriptorLimit {
    /// Descriptors kept for everything but connections: the log and its readers, the event loops,
    /// standard streams, and refused connections while their 503 goes out.
    static let reserved = 128
    /// The most connections allowed by default, however high the limit.
    static let defaultConnectionCeiling = 10_000

    /// Raises the soft limit to the hard one where it can, and returns the soft limit in force.
    static func raise() -> Int {
        var limit = rlimit()
        // Unknown (it never fails on a valid resource): assume the common default.
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        var wanted = limit.rlim_max
        #if canImport(Darwin)
        // Darwin refuses a soft limit above OPEN_MAX whatever the hard limit says.
        wanted = min(wanted, rlim_t(OPEN_MAX))
        #endif
        if wanted > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }

    /// The most connections the server may hold within `descriptors`, or what the config asks
    /// when that fits; an error naming both, and the config file, when it does not.
    static func maxConnections(configured: Int?, at mark: YAMLMark? = nil, descriptors: Int, config: String) throws(CLIError) -> Int {
        let fitting = max(1, descriptors - reserved)
        guard let configured else { return min(fitting, defaultConnectionCeiling) }
        guard configured <= fitting else {
            let problem = ConfigError(
                path: config, line: mark?.line, column: mark?.column, key: "http.max_connections",
                message: "\(configured) connections, but this process may open only \(descriptors) descriptors, which leaves room for \(fitting) connections (\(reserved) are kept for the log and the server): lower http.max_connections, or raise the limit (ulimit -n) before starting the server"
            )
            throw CLIError(.config, problem.description)
        }
        return configured
    }

    /// Below this many connections, a derived limit is worth a warning: a server that holds so
    /// few refuses most clients of a busy hour.
    static let fewConnections = 256

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
