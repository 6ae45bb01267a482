/// The `http:` section of `config.yaml`: how long connections may idle or take to send a request,
/// how many may be open, how long a graceful stop waits, and which web origins may call the API.
extension Configuration {
    /// Connection limits and browser access.
    public struct HTTP: Sendable, Hashable {
        /// Seconds a keep-alive connection may wait for its next request (`idle_timeout_seconds`).
        public var idleTimeoutSeconds = 60
        /// Seconds a client may take to send one request, head and body (`read_timeout_seconds`).
        public var readTimeoutSeconds = 30
        /// The most connections open at once (`max_connections`); nil: derived from the process's
        /// descriptor limit at start-up.
        public var maxConnections: Int?
        /// Where `max_connections` is in the file, for an error that its value cannot be had.
        public var maxConnectionsMark: YAMLMark?
        /// Seconds a graceful stop lets requests in flight finish (`shutdown_grace_seconds`).
        public var shutdownGraceSeconds = 10
        /// The web origins whose pages may call the API (`cors_origins`): `scheme://host[:port]`,
        /// or `*` for any page, reads only. Empty: no CORS headers at all.
        public var corsOrigins: [String] = []

        public init() {}

        /// The keys the section may hold.
        static let keys = ["idle_timeout_seconds", "read_timeout_seconds", "max_connections", "shutdown_grace_seconds", "cors_origins"]
    }
}

extension ConfigReader {
    /// The `http:` section.
    func http(_ node: YAMLNode) throws(ConfigError) -> Configuration.HTTP {
        var http = Configuration.HTTP()
        if node.isNull { return http }
        for (name, value) in try mapping(node, key: "http", allowed: Configuration.HTTP.keys) {
            let key = "http.\(name)"
            switch name {
            case "idle_timeout_seconds": http.idleTimeoutSeconds = try integer(value, key: key, in: 1...86_400)
            case "read_timeout_seconds": http.readTimeoutSeconds = try integer(value, key: key, in: 1...3_600)
            case "max_connections":
                http.maxConnections = try integer(value, key: key, in: 1...1_000_000)
                http.maxConnectionsMark = value.mark
            case "shutdown_grace_seconds": http.shutdownGraceSeconds = try integer(value, key: key, in: 0...3_600)
            case "cors_origins":
                for item in try list(value, key: key) {
                    let text = try string(item, key: key)
                    guard let origin = text == "*" ? text : Self.origin(text) else {
                        throw error(item, key: key, "\"\(text)\" is not an origin: write scheme://host or scheme://host:port (no path, no trailing slash; an IPv6 address in brackets), or * for any page")
                    }
                    http.corsOrigins.append(origin)
                }
            default: break
            }
        }
        return http
    }

    /// `text` as browsers send it in `Origin` (RFC 6454): `http://host`, `https://host:8443`,
    /// `http://[::1]:3000`: a scheme, a host (a name, an IPv4 address, or an IPv6 one in brackets)
    /// and an optional port, nothing more; scheme and host lowercased and a default port (80 for
    /// http, 443 for https) dropped, so that it matches. Nil when it is not an origin.
    static func origin(_ text: String) -> String? {
        guard let schemeEnd = text.range(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        var authority = text[schemeEnd.upperBound...]
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        let host: String
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let address = authority[authority.index(after: authority.startIndex)..<close]
            guard address.contains(":"), address.allSatisfy({ $0.isHexDigit || ":.".contains($0) }) else { return nil }
            host = "[" + address.lowercased() + "]"
            authority = authority[authority.index(after: close)...]
        } else {
            let end = authority.firstIndex(of: ":") ?? authority.endIndex
            host = authority[..<end].lowercased()
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.".contains($0)) }) else { return nil }
            authority = authority[end...]
        }
        guard let colon = authority.first else { return "\(scheme)://\(host)" }
        let digits = authority.dropFirst()
        guard colon == ":", !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(digits), (1...65535).contains(port) else { return nil }
        if (scheme, port) == ("http", 80) || (scheme, port) == ("https", 443) { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }
}
