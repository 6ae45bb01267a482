import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import Logging

/// Reading a log's lines whichever storage holds it: what `export`, `import` and `verify` share.
enum LogLines {
    /// The log's name in messages: the file's path, or `postgres://USER@HOST:PORT/DATABASE#TABLE`.
    static func name(of source: LogOptions.Source) -> String {
        switch source {
        case .file(let path): path
        case .postgres(let settings): settings.description
        }
    }

    /// Delivers the log's complete lines in order until `body` stops. Returns the bytes after the
    /// last complete line of a file (a line being written, or torn by a crash), if any.
    @discardableResult
    static func read(
        _ source: LogOptions.Source,
        computesHashes: Bool = false,
        syncsFirst: Bool = false,
        _ body: (inout LogLine) throws(LogError) -> LogReader.Next
    ) async throws(LogError) -> Int? {
        switch source {
        case .file(let path):
            var reader = LogReader(path: path)
            reader.computesHashes = computesHashes
            reader.syncsFirst = syncsFirst
            return try reader.read(progress: Output.progress(label: "reading"), body).tail?.bytes.count
        case .postgres(let settings):
            _ = try await PostgresLog.readLines(settings, computesHashes: computesHashes, logger: Logger(label: "announcements"), body)
            return nil
        }
    }

    /// The announcements the log has an `erased` event for, read leniently (a line that does not
    /// parse, damaged or of a newer version, is left to the caller's own reading). An erasure a
    /// crash interrupted has not sealed its lines yet, and only its erased event, which may come
    /// after what a command shows, says that their texts are gone.
    static func erasedIDs(_ source: LogOptions.Source) async throws(LogError) -> Set<Int> {
        var erased: Set<Int> = []
        try await read(source) { line throws(LogError) in
            if case .success(let event) = line.parsed, event.type == .erased { erased.insert(event.id) }
            return .continue
        }
        return erased
    }

    /// Checks the whole log as `verify` does.
    static func verify(_ source: LogOptions.Source, rules: ValidationRules, expecting expected: LogHead? = nil, recorded: (head: LogHead, record: String)? = nil) async throws(LogError) -> VerifyReport {
        var verification = LogVerification(path: name(of: source), rules: rules, expecting: expected, recorded: recorded)
        let tail = try await read(source, computesHashes: true) { line in
            verification.check(line)
            return .continue
        }
        return verification.report(tail: tail)
    }
}
