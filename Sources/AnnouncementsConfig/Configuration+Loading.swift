import AnnouncementsDomain
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Configuration {
    /// The keys `config.yaml` may hold.
    public static let keys = ["host", "port", "log", "seed", "tokens", "reads", "max_body_bytes", "feed_heartbeat_seconds", "http", "snapshot", "storage", "postgres", "log_level", "log_format", "metrics"]

    /// Reads and checks a config file. `environment` resolves `env:NAME` tokens. A file past
    /// `ConfigLimits.maxFileBytes` is refused before it is read.
    public static func load(path: String, environment: [String: String]) throws(ConfigError) -> Configuration {
        guard let file = fopen(path, "r") else {
            throw unreadable(path)
        }
        defer { fclose(file) }
        var status = stat()
        if fstat(fileno(file), &status) == 0, Int(status.st_size) > ConfigLimits.maxFileBytes {
            throw .tooLarge(path: path, bytes: Int(status.st_size))
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes.append(contentsOf: buffer[..<count])
            // A file that grows, a pipe or a device has no size to check first.
            guard bytes.count <= ConfigLimits.maxFileBytes else { throw .tooLarge(path: path, bytes: nil) }
        }
        guard ferror(file) == 0 else { throw unreadable(path) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let place = YAMLMark(ofByte: firstInvalidUTF8(in: bytes), in: bytes)
            throw ConfigError(path: path, line: place.line, column: place.column, message: "the config file is not valid UTF-8 here (save it as UTF-8)")
        }
        var configuration = try parse(text, path: path, environment: environment)
        if !configuration.logPath.hasPrefix("/"), let slash = path.lastIndex(of: "/") {
            configuration.logPath = String(path[...slash]) + configuration.logPath
        }
        return configuration
    }

    /// The offset of the first byte of `bytes` that is not UTF-8 (its end when all are).
    private static func firstInvalidUTF8(in bytes: [UInt8]) -> Int {
        var offset = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while case .scalarValue(let scalar) = decoder.decode(&iterator) { offset += UTF8.width(scalar) }
        return offset
    }

    /// A file that cannot be read, with the system's reason (a folder reads as "Is a directory").
    private static func unreadable(_ path: String) -> ConfigError {
        var error = ConfigError(path: path, message: "cannot read the config file: \(String(cString: strerror(errno)))")
        error.isUnreadable = true
        return error
    }

    /// Parses config text; `path` only names the file in errors, and `log` is left as written.
    /// Text past `ConfigLimits.maxFileBytes` is refused before it is parsed.
    public static func parse(_ text: String, path: String, environment: [String: String]) throws(ConfigError) -> Configuration {
        guard text.utf8.count <= ConfigLimits.maxFileBytes else { throw .tooLarge(path: path, bytes: text.utf8.count) }
        let root: YAMLNode?
        do throws(YAMLError) {
            root = try YAMLParser.parse(text)
        } catch {
            throw ConfigError(path: path, line: error.mark.line, column: error.mark.column, message: error.message)
        }
        var configuration = Configuration()
        guard let root, !root.isNull else { return configuration }
        let reader = ConfigReader(path: path)
        let fields = try reader.mapping(root, key: nil, allowed: keys)
        var seedNodes: [(node: YAMLNode, key: String)] = []
        for (name, value) in fields {
            switch name {
            case "host": configuration.host = try reader.host(value, key: name)
            case "port": configuration.port = try reader.integer(value, key: name, in: 0...65535)
            case "log": configuration.logPath = try reader.pathOrHost(value, key: name)
            case "max_body_bytes": configuration.rules.maxBodyBytes = try reader.integer(value, key: name, in: 1...ValidationRules.maxBodyBytesLimit)
            case "feed_heartbeat_seconds": configuration.feedHeartbeatSeconds = try reader.integer(value, key: name, in: 1...3600)
            case "http": configuration.http = try reader.http(value)
            case "snapshot": configuration.snapshot = try reader.snapshot(value)
            case "tokens": configuration.tokens = try reader.tokens(value, environment: environment)
            case "reads": configuration.reads = try reader.choice(value, key: name, ReadAccess.self)
            case "log_level": configuration.logLevel = try reader.choice(value, key: name, Logger.Level.self)
            case "log_format": configuration.logFormat = try reader.choice(value, key: name, LogFormat.self)
            case "metrics": configuration.metrics = try reader.metrics(value, environment: environment)
            case "storage":
                // An empty `postgres:` is none, as an empty section is everywhere.
                let postgres = fields.first { $0.0 == "postgres" && !$0.1.isNull }?.1
                configuration.storage = try reader.storage(value, postgres: postgres, environment: environment)
            case "postgres" where value.isNull:
                break
            case "postgres":
                // Read with `storage: postgres`. Kept unused beside `storage: file` written out
                // (its keys must still be known ones); without `storage`, it is taken for a
                // forgotten `storage: postgres` (a node would keep a log of its own, apart from
                // the others'), not left aside without a word.
                _ = try reader.mapping(value, key: name, allowed: Configuration.postgresKeys)
                guard fields.contains(where: { $0.0 == "storage" }) else {
                    throw reader.error(value, key: name, "is set, but `storage` is not, so the log would be the file `log` names: add `storage: postgres` to keep it in PostgreSQL (or `storage: file` to keep this section unused)")
                }
            case "seed":
                for (index, item) in try reader.list(value, key: name).enumerated() {
                    configuration.seed.append(try reader.draft(item, key: "seed[\(index)]"))
                    seedNodes.append((item, "seed[\(index)]"))
                }
            default: break
            }
        }
        if let scrape = configuration.metrics.token, let token = configuration.tokens.first(where: { $0.token == scrape }),
           let metrics = fields.first(where: { $0.0 == "metrics" })?.1 {
            let node = try reader.mapping(metrics, key: "metrics", allowed: Configuration.Metrics.keys).first { $0.0 == "token" }?.1 ?? metrics
            throw reader.error(node, key: "metrics.token", "is the token of `tokens.\(token.name)`: a scraper needs a token of its own")
        }
        for (node, key) in seedNodes {
            try reader.check(node, key: key, rules: configuration.rules)
        }
        return configuration
    }
}
