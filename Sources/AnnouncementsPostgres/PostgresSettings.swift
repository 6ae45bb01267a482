import Foundation

/// Where the PostgreSQL log is and how to reach it: `config.yaml`'s `postgres:` section, or a URL.
public struct PostgresSettings: Sendable, Hashable, CustomStringConvertible {
    /// How the connection is encrypted (`sslmode` in the URL, `tls` in the config).
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP: loopback, or a network you trust.
        case disable
        /// TLS when the server offers it (its certificate not checked, as libpq's `prefer`), plain otherwise.
        case prefer
        /// TLS or no connection (the certificate not checked, as libpq's `require`).
        case require
        /// TLS with the server's certificate checked against the system's roots and its host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    /// The table that holds the events (created when missing).
    public var table: String
    /// How long an append (one commit) or a read may take before the connection is given up as
    /// dead and the log unusable until restart (the commit's outcome is then unknown).
    public var commitTimeout = Duration.seconds(30)
    /// How many rows one read of the table takes at most: start-up and catching up read it in
    /// pages of this many, each a statement of its own (one for a whole large table would outlive
    /// the statement timeout, or the commit timeout a read is waited for).
    public var pageRows = 20_000
    /// How long a node holding the writer role may make no progress (no statement begun or
    /// ended) while another waits in line for the role, before the waiter ends its session: a
    /// node stopped, frozen or cut off loses the role this long after another asks for it.
    public var stallLimit = Duration.seconds(5)
    /// How often a node checks that its listener still hears notices (it sends one of its own,
    /// which must come back within as long): a listener on a half-open connection is closed
    /// within twice this, and connects again a second later.
    public var listenerCheck = Duration.seconds(5)

    /// The address the other nodes send their writes to while this one holds the writer role
    /// (`postgres.advertise`, `http://HOST:PORT`); nil: the address the server listens on.
    public var advertise: String?

    public static let defaultTable = "announcement_events"

    public init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String, tls: TLSMode = .prefer, table: String = defaultTable) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
        self.table = table
    }

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
    /// (`postgresql://` too). Throws a message naming what is wrong (never echoing the password).
    public init(url: String, table: String = defaultTable) throws(PostgresSettingsError) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw PostgresSettingsError("the PostgreSQL URL must look like postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        guard let host = parts.host, !host.isEmpty else { throw PostgresSettingsError("the PostgreSQL URL names no host") }
        guard let user = parts.user, !user.isEmpty else { throw PostgresSettingsError("the PostgreSQL URL names no user (postgres://USER@HOST/DATABASE)") }
        if let port = parts.port, !(1...65535).contains(port) {
            throw PostgresSettingsError("the PostgreSQL URL's port must be from 1 to 65535, not \(port)")
        }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw PostgresSettingsError("the PostgreSQL URL names no database (postgres://USER@HOST/DATABASE)")
        }
        var tls = TLSMode.prefer
        for item in parts.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw PostgresSettingsError("the PostgreSQL URL has an unknown parameter \(item.name) (known: sslmode)")
            }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                throw PostgresSettingsError("sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            tls = mode
        }
        try Self.check(table: table)
        self.init(
            // (`user` and `password` come percent-decoded already.)
            host: host, port: parts.port ?? 5432, user: user,
            password: parts.password, database: database, tls: tls, table: table
        )
    }

    /// A table name is put into SQL as it is: letters, digits and `_` only, not starting with a
    /// digit, and not a word SQL reserves (`user`, `order`: no statement could name it).
    public static func check(table: String) throws(PostgresSettingsError) {
        let isValid = !table.isEmpty && table.utf8.count <= 60
            && table.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
            && !(table.utf8.first.map { $0 >= 48 && $0 <= 57 } ?? true)
        guard isValid else {
            throw PostgresSettingsError("the table name \"\(table)\" must be lowercase letters, digits and _ (not first), at most 60 bytes")
        }
        guard !reservedWords.contains(table) else {
            throw PostgresSettingsError("the table name \"\(table)\" is a word SQL reserves: choose another, such as \(table)_events")
        }
    }

    /// The words PostgreSQL reserves, which cannot name a table unquoted (`pg_get_keywords()`,
    /// categories R and T, PostgreSQL 15, and `system_user` from 16).
    static let reservedWords: Set<String> = [
        "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "authorization", "binary", "both",
        "case", "cast", "check", "collate", "collation", "column", "concurrently", "constraint", "create", "cross",
        "current_catalog", "current_date", "current_role", "current_schema", "current_time", "current_timestamp",
        "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "false", "fetch",
        "for", "foreign", "freeze", "from", "full", "grant", "group", "having", "ilike", "in", "initially", "inner",
        "intersect", "into", "is", "isnull", "join", "lateral", "leading", "left", "like", "limit", "localtime",
        "localtimestamp", "natural", "not", "notnull", "null", "offset", "on", "only", "or", "order", "outer",
        "overlaps", "placing", "primary", "references", "returning", "right", "select", "session_user", "similar",
        "some", "symmetric", "system_user", "table", "tablesample", "then", "to", "trailing", "true", "union", "unique",
        "user", "using", "variadic", "verbose", "when", "where", "window", "with",
    ]

    /// An advertised address is `http://HOST:PORT` (no path, user or query; the port written out,
    /// as a server's is rarely 80): the other nodes put a write's path after it. Returns it without a trailing `/`.
    public static func checked(advertise address: String) throws(PostgresSettingsError) -> String {
        let address = address.hasSuffix("/") ? String(address.dropLast()) : address
        guard let parts = URLComponents(string: address), parts.scheme == "http", let host = parts.host, !host.isEmpty,
              parts.port.map({ (1...65535).contains($0) }) == true, parts.path.isEmpty, parts.query == nil, parts.user == nil,
              parts.fragment == nil, !address.contains(where: \.isWhitespace)
        else {
            // A user and a password given in it are not shown.
            let shown = URLComponents(string: address).flatMap { parts -> String? in
                guard parts.user != nil || parts.password != nil else { return nil }
                var shown = parts
                (shown.user, shown.password) = (nil, nil)
                return shown.string.map { $0.replacingOccurrences(of: "://", with: "://…@") }
            } ?? address
            throw PostgresSettingsError("the address to advertise must look like http://HOST:PORT (how the other nodes reach this one: its port written out, no path, no user or password), not \"\(shown)\"")
        }
        return address
    }

    /// `postgres://USER@HOST:PORT/DATABASE#TABLE`: the log's name in messages, without the password.
    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)#\(table)"
    }
}

/// A PostgreSQL URL or setting that cannot be used, and why.
public struct PostgresSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
