import AnnouncementsCore
import ArgumentParser
import Foundation

/// `make bench`: measures replay and durable appends. A benchmark, never a test: it prints figures
/// and ratios measured side by side in one run, and asserts nothing.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announcements-bench",
        abstract: "Benchmarks for the announcement store.",
        subcommands: [Generate.self, Replay.self, Startup.self, Append.self]
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

    struct Startup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time a store's start-up from the whole log and from its snapshot.")

        @Argument(help: "The log to open (a snapshot is written beside it when there is none).") var log: String
        @Option(help: "Timed start-ups of each kind; the median is reported.") var runs = 3

        func run() async throws {
            try await StartupBenchmark(path: log, runs: runs).run()
        }
    }

    struct Append: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Durable appends per second with concurrent writers.")

        @Option(help: "A folder for the logs (on the disk being measured).") var dir: String
        @Option(parsing: .upToNextOption, help: "Concurrent writer counts.") var writers: [Int] = [1, 16, 64]
        @Option(help: "Seconds to write for, per writer count.") var seconds = 3.0
        @Option(help: "Feed followers in the last run, beside the most writers (0: no such run).") var followers = 100

        func run() async throws {
            try await AppendBenchmark(folder: dir, writers: writers, seconds: seconds, followers: followers).run()
        }
    }
}
