import AnnouncementsDomain
@testable import AnnouncementsPostgres
import AnnouncementsStore
import Foundation
import Logging
import PostgresNIO
import Testing

/// The throwaway PostgreSQL that `make test` starts (scripts/test.sh), if any.
enum PostgresTesting {
    static let variable = "ANNOUNCEMENTS_TEST_POSTGRES_URL"
    static let url = ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    static var isAvailable: Bool { url != nil }
    static let skipReason: Comment = "\(variable) is not set: run `make test` (scripts/test.sh starts a throwaway PostgreSQL), or set it to a database of your own"

    /// Settings for a table of its own, so that tests running side by side never share a log.
    static func settings(table: String = uniqueTable()) throws -> PostgresSettings {
        guard let url else { throw SkipError() }
        var settings = try PostgresSettings(url: url, table: table)
        settings.tls = .disable
        return settings
    }

    static func uniqueTable() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    struct SkipError: Error {}
}

/// Where a store keeps its log in a test: a file in a temporary folder, or a table of its own.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case file, postgres

    var testDescription: String { rawValue }

    /// The backends this run can test: PostgreSQL only when `make test` started one (the
    /// PostgreSQL-only suite says so when it is skipped).
    static var available: [Backend] {
        PostgresTesting.isAvailable ? [.file, .postgres] : [.file]
    }

    /// A new, empty log of this kind.
    func makePlace() throws -> LogPlace {
        switch self {
        case .file: LogPlace(backend: self, folder: TemporaryFolder(), settings: nil)
        case .postgres: LogPlace(backend: self, folder: TemporaryFolder(), settings: try PostgresTesting.settings())
        }
    }
}

/// One log for a test: a file path or a table, with what tests do with it.
struct LogPlace: Sendable {
    let backend: Backend
    let folder: TemporaryFolder
    var settings: PostgresSettings?

    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    var path: String { folder.file("log.jsonl") }

    var source: String { settings?.description ?? path }

    /// Opens a store on the log as its writer: for PostgreSQL, as `serve` does (the writer role
    /// shared with other stores on the table), or `alone` (the role taken at once, and kept).
    func open(seed: [AnnouncementDraft] = [], rules: ValidationRules = ValidationRules(), alone: Bool = false) async throws -> EventStore {
        if let settings {
            let (log, replay) = try await PostgresLog.open(settings, alone: alone, logger: Self.quiet)
            return try await EventStore.open(log: log, replay: replay, rules: rules, seed: seed, logger: Self.quiet)
        }
        return try await EventStore.open(path: path, rules: rules, seed: seed, logger: Self.quiet)
    }

    /// The log itself, opened as its only writer (as `import` opens it), without a store.
    func openLog() async throws -> any EventLog {
        if let settings { return try await PostgresLog.open(settings, alone: true, logger: Self.quiet).log }
        return try FileLog(path: path)
    }

    /// The log's lines, as a file would hold them (without newlines).
    func lines() async throws -> [[UInt8]] {
        var lines: [[UInt8]] = []
        if let settings {
            _ = try await PostgresLog.readLines(settings, logger: Self.quiet) { line in
                lines.append(Array(line.bytes))
                return .continue
            }
        } else {
            try LogReader(path: path).read { line in
                lines.append(Array(line.bytes))
                return .continue
            }
        }
        return lines
    }

    /// The state the whole log replays to, read without the writer role.
    func replay() async throws -> Replay {
        if let settings { return try await PostgresLog.replay(settings, logger: Self.quiet) }
        return try LogReader(path: path).replay()
    }
}

extension LogPlace {
    /// Runs `body` on a connection of the test's own to the log's database (a PostgreSQL log only).
    @discardableResult
    func withConnection<T>(_ body: (PostgresConnection, PostgresSettings) async throws -> T) async throws -> T {
        guard let settings else { throw PostgresTesting.SkipError() }
        let connection = try await PostgresLog.connect(settings, id: 99, logger: Self.quiet)
        do {
            let result = try await body(connection, settings)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The same log reached through a `FreezableProxy` of its own (a PostgreSQL log only): a
    /// network the test can silence. Stop the proxy when done.
    func throughProxy() throws -> (place: LogPlace, proxy: FreezableProxy) {
        guard let settings else { throw PostgresTesting.SkipError() }
        let proxy = try FreezableProxy(to: settings.host, port: settings.port)
        var place = self
        place.settings?.port = proxy.port
        return (place, proxy)
    }

    /// How many rows the log's table holds.
    func rowCount() async throws -> Int64 {
        try await withConnection { connection, settings in
            let rows = try await connection.query("SELECT count(*) FROM \(unescaped: settings.table)", logger: Self.quiet)
            for try await count in rows.decode(Int64.self) { return count }
            return 0
        }
    }

    /// When a trigger of `addTrigger` fires.
    enum TriggerTiming {
        /// Before each row is inserted.
        case beforeInsert
        /// When the transaction that inserted a row commits (a deferred constraint trigger).
        case atCommit
    }

    /// Adds the row trigger `name` to the log's table, firing at `timing`, whose function (its own,
    /// named after the table and the trigger) runs `body`, plpgsql statements.
    func addTrigger(_ name: String, _ timing: TriggerTiming, running body: String) async throws {
        try await withConnection { connection, settings in
            let table = settings.table, function = "\(settings.table)_\(name)"
            try await connection.query("""
                CREATE FUNCTION \(unescaped: function)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \(unescaped: body) END $$
                """, logger: Self.quiet)
            let trigger = switch timing {
            case .beforeInsert: "TRIGGER \(name) BEFORE INSERT ON \(table)"
            case .atCommit: "CONSTRAINT TRIGGER \(name) AFTER INSERT ON \(table) DEFERRABLE INITIALLY DEFERRED"
            }
            try await connection.query("CREATE \(unescaped: trigger) FOR EACH ROW EXECUTE FUNCTION \(unescaped: function)()", logger: Self.quiet)
        }
    }

    /// Drops the trigger `name` of `addTrigger` from the log's table.
    func dropTrigger(_ name: String) async throws {
        try await withConnection { connection, settings in
            try await connection.query("DROP TRIGGER \(unescaped: name) ON \(unescaped: settings.table)", logger: Self.quiet)
        }
    }

    /// Ends the session that holds the writer role, as if its machine had died: the server drops it.
    func endWriterSession() async throws {
        try await withConnection { connection, settings in
            try await connection.query("""
                SELECT pg_terminate_backend(pid) FROM (\(unescaped: PostgresLog.roleLocks(settings.table))) AS role WHERE granted
                """, logger: Self.quiet)
        }
    }
}

/// A fresh folder for one test, removed when the value is released.
final class TemporaryFolder: Sendable {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "announcements-pg-test-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func file(_ name: String) -> String {
        path + "/" + name
    }
}
