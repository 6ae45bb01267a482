import AnnouncementsDomain
import AnnouncementsPostgres
import ArgumentParser
import Foundation
import Hummingbird
import Logging

/// `make bench`: measures replay and durable appends, runs the anchors the HTTP figures are held
/// against (a bare Hummingbird server, the disk's own sync), and prints the goals' table. A
/// benchmark, never a test: it prints figures and ratios measured side by side in one run, and
/// asserts nothing.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announcements-bench",
        abstract: "Benchmarks for the announcement store.",
        subcommands: [Generate.self, Replay.self, PostgresReplay.self, Startup.self, Search.self, Append.self, Fsync.self, Bare.self, Goals.self]
    )
}

extension Bench {
    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a synthetic log: 60% created, 30% edited, 10% deleted.")

        @Option(help: "Number of events.") var events = 1_000_000
        @Option(help: "The log file to write (replaced).") var out: String

        func run() throws {
            let clock = ContinuousClock()
            let start = clock.now
            var generator = LogGenerator(seed: 42)
            let bytes = try generator.write(events: events, to: out)
            print("generated \(events) events, \(bytes / 1_000_000) MB in \(clock.now - start): \(out)")
        }
    }

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time a full replay against reading the file and Foundation's JSONDecoder.")

        @Argument(help: "The log to replay.") var log: String
        @Option(help: "Timed replays; the median is reported.") var runs = 3
        @Option(help: "Lines decoded by the JSONDecoder baseline.") var decoderLines = 100_000

        func run() throws {
            try ReplayBenchmark(path: log, runs: runs, decoderLines: decoderLines).run()
        }
    }

    struct PostgresReplay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pg-replay",
            abstract: "Copy a log into a new PostgreSQL table, then time replays of both, alternating."
        )
        @Argument(help: "The log file to copy and replay.") var log: String
        @Option(help: ArgumentHelp("The database (a new table is created in it).", valueName: "url")) var postgres: String
        @Option(help: "Replays of each; the medians are reported.") var runs = 3

        func run() async throws {
            var settings = try PostgresSettings(url: postgres)
            if !postgres.contains("sslmode=") { settings.tls = .disable }
            try await PostgresReplayBenchmark(path: log, settings: settings, runs: runs).run()
        }
    }

    struct Startup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time a store's start-up from the whole log and from its snapshot.")

        @Argument(help: "The log to open (a snapshot is written beside it when there is none).") var log: String
        @Option(help: "Timed start-ups of each kind; the median is reported.") var runs = 3
        @Flag(inversion: .prefixedNo, help: "Whether the snapshot written first stores the search index (as a server's does).") var searchIndex = true

        func run() async throws {
            try await StartupBenchmark(path: log, runs: runs, searchIndex: searchIndex).run()
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Build the search index over a log's live announcements; time two-word queries.")

        @Argument(help: "The log to replay.") var log: String
        @Option(help: "Queries to time.") var queries = 2000

        func run() throws {
            try SearchBenchmark(path: log, queries: queries).run()
        }
    }

    struct Append: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Durable appends per second with concurrent writers.")

        @Option(help: "A folder for the logs (on the disk being measured).") var dir: String
        @Option(parsing: .upToNextOption, help: "Concurrent writer counts.") var writers: [Int] = [1, 16, 64]
        @Option(help: "Seconds to write for, per writer count.") var seconds = 3.0
        @Option(help: "Feed followers in the last run, beside the most writers (0: no such run).") var followers = 100
        @Option(help: ArgumentHelp("Append to a PostgreSQL log instead of a file: a new table per run in this database.", valueName: "url"))
        var postgres: String?
        @Flag(help: "With --postgres: open the log as `serve` does, shared with other nodes (notifying each commit, followed), not alone.")
        var shared = false

        func run() async throws {
            let settings = try postgres.map { url throws in
                var settings = try PostgresSettings(url: url)
                if !url.contains("sslmode=") { settings.tls = .disable }
                return settings
            }
            try await AppendBenchmark(folder: dir, writers: writers, seconds: seconds, followers: followers, postgres: settings, shared: shared).run()
        }
    }

    struct Fsync: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The disk's own rate for one line: write one line and fdatasync it, in a loop.",
            discussion: "The anchor of a durable POST on one connection: a writer that syncs each line alone cannot beat it."
        )

        @Option(help: "A folder on the disk being measured (created if missing).") var dir: String
        @Option(help: "Seconds to loop for.") var seconds = 2.0
        @Option(help: "Bytes per line, newline included (a 1.1 KB announcement's line by default).") var lineBytes = 1100

        func validate() throws {
            guard seconds > 0, seconds.isFinite else { throw ValidationError("--seconds takes a positive number, not \(seconds).") }
            guard lineBytes > 0 else { throw ValidationError("--line-bytes takes a positive number, not \(lineBytes).") }
        }

        func run() throws {
            try BenchError.createFolder(dir)
            let sync = DiskSync(path: "\(dir)/fsync-\(ProcessInfo.processInfo.processIdentifier).bin", linesPerSync: 1, lineBytes: lineBytes)
            let result = try sync.run(for: .milliseconds(Int(seconds * 1000)))
            print(String(format: "write + fdatasync of one %d-byte line: %.0f syncs/s, median %.0f µs (%d syncs in %.2f s)",
                         lineBytes, result.syncsPerSecond, result.median.seconds * 1e6, result.latencies.count, result.elapsed.seconds))
        }
    }

    struct Bare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A bare Hummingbird server: GET /health and a POST /announcements that echoes its body, no middleware.",
            discussion: "Prints `listening on http://HOST:PORT` once it listens, like `announcements serve`; SIGINT or SIGTERM stops it."
        )

        @Option(help: "The address to listen on.") var host = "127.0.0.1"
        @Option(help: "The port to listen on (0: any free port).") var port = 0

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port takes 0 to 65535, not \(port).") }
        }

        func run() async throws {
            let level = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let host = host
            let app = BareServer.application(host: host, port: port, logger: Logger(label: "bare")) { port in
                print("listening on http://\(host):\(port)")
                fflush(nil)
            }
            try await app.runService()
        }
    }

    struct Goals: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the goals' table from the file the bench scripts wrote.",
            discussion: "One goal per line, tab-separated: `ratio NAME MEASURED ANCHOR UNIT TARGET`, `most NAME MEASURED UNIT LIMIT` or `skip NAME REASON`."
        )

        @Argument(help: "The goals file.") var file: String

        func run() throws {
            print(GoalTable(goals: try GoalFile.read(path: file)).render())
        }
    }
}
