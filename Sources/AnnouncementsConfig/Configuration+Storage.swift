import AnnouncementsPostgres

/// Where the log lives: `storage: file` (the default: `log:`, a file beside the config) or
/// `storage: postgres` with a `postgres:` section.
extension Configuration {
    public enum Storage: Sendable, Hashable {
        /// The log file at `logPath`.
        case file
        /// A table in PostgreSQL.
        case postgres(PostgresSettings)

        /// The PostgreSQL settings, for `storage: postgres`.
        public var postgres: PostgresSettings? {
            if case .postgres(let settings) = self { return settings }
            return nil
        }
    }

    /// The keys the `postgres:` section may hold.
    static let postgresKeys = ["url", "password", "table", "tls", "advertise"]

    /// The sections that hold secrets (tokens, a database's URL and password): a message about
    /// their shape never quotes what they hold.
    static let secretSections: Set<String> = ["tokens", "postgres", "metrics"]
}

extension ConfigReader {
    /// `storage:`, checked against the `postgres:` section (nil when there is none).
    func storage(_ node: YAMLNode, postgres: YAMLNode?, environment: [String: String]) throws(ConfigError) -> Configuration.Storage {
        let kind = try nonEmptyString(node, key: "storage")
        switch kind {
        case "file":
            return .file
        case "postgres":
            guard let postgres else { throw error(node, key: "storage", "`storage: postgres` needs a `postgres:` section with at least `url`") }
            return .postgres(try postgresSettings(postgres, environment: environment))
        default:
            // Not quoted when it may be a database's URL, whose password no message prints.
            let found = kind.contains(":") || kind.contains("@") ? "another value (a database's URL goes under postgres.url)" : "\"\(kind)\""
            throw error(node, key: "storage", "expected file or postgres, found \(found)")
        }
    }

    /// The `postgres:` section: `url` (or `env:NAME`), and optionally `password` (or `env:NAME`,
    /// which replaces the URL's), `table` and `tls` (which replaces the URL's `sslmode`).
    func postgresSettings(_ node: YAMLNode, environment: [String: String]) throws(ConfigError) -> PostgresSettings {
        var url: (String, YAMLNode)?
        // nil: no `password` key, or its variable unset or empty; either way the URL's stays.
        var password: String?
        var table = PostgresSettings.defaultTable
        var tls: PostgresSettings.TLSMode?
        var advertise: String?
        for (name, value) in try mapping(node, key: "postgres", allowed: Configuration.postgresKeys) {
            let key = "postgres.\(name)"
            switch name {
            case "url": url = (try secret(value, key: key, environment: environment, required: true) ?? "", value)
            case "password": password = try secret(value, key: key, environment: environment, required: false)
            case "table":
                table = try nonEmptyString(value, key: key)
                do throws(PostgresSettingsError) {
                    try PostgresSettings.check(table: table)
                } catch {
                    throw self.error(value, key: key, error.message)
                }
            case "tls":
                let text = try nonEmptyString(value, key: key)
                guard let mode = PostgresSettings.TLSMode(rawValue: text) else {
                    throw error(value, key: key, "expected one of \(PostgresSettings.TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), found \"\(text)\"")
                }
                tls = mode
            case "advertise":
                let text = try nonEmptyString(value, key: key)
                do throws(PostgresSettingsError) {
                    advertise = try PostgresSettings.checked(advertise: text)
                } catch {
                    throw self.error(value, key: key, error.message)
                }
            default: break
            }
        }
        guard let (text, urlNode) = url else { throw error(node, key: "postgres", "missing `url` (postgres://USER@HOST:PORT/DATABASE, or env:NAME)") }
        var settings: PostgresSettings
        do throws(PostgresSettingsError) {
            settings = try PostgresSettings(url: text, table: table)
        } catch {
            throw self.error(urlNode, key: "postgres.url", error.message)
        }
        if let password { settings.password = password }
        if let tls { settings.tls = tls }
        settings.advertise = advertise
        return settings
    }

    /// A value given as it is or as `env:NAME`. A variable that is unset or empty is an error when
    /// `required`, and nil otherwise.
    private func secret(_ node: YAMLNode, key: String, environment: [String: String], required: Bool) throws(ConfigError) -> String? {
        let spec = try nonEmptyString(node, key: key)
        guard let variable = try variable(in: spec, node, key: key, example: "ANNOUNCEMENTS_POSTGRES_URL") else { return spec }
        guard let value = environment[variable], !value.isEmpty else {
            if required { throw error(node, key: key, "the environment variable \(variable) is not set") }
            return nil
        }
        // A file read into the variable may end with a line break, which would be part of it.
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw error(node, key: key, "the value in $\(variable) holds a line break or another control character (a file read into the variable may end with one): remove it")
        }
        return value
    }
}
