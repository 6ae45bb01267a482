import AnnouncementsDomain
import AnnouncementsPostgres
import AnnouncementsStore
import Logging

/// Replay of the same log from a file and from PostgreSQL, alternating, in one run: the log is
/// first copied into a new table (`EventLog.append(linesOf:)`, as `announcements import` does).
struct PostgresReplayBenchmark {
    var path: String
    var settings: PostgresSettings
    var runs: Int

    func run() async throws {
        let quiet = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
        var settings = self.settings
        settings.table = "bench_replay_\(UInt32.random(in: 0...UInt32.max))"
        let clock = ContinuousClock()
        let copyStart = clock.now
        let (log, _) = try await PostgresLog.open(settings, alone: true, logger: quiet)
        let end = try log.append(linesOf: path)
        log.close()
        let copySeconds = (clock.now - copyStart).seconds
        print(String(format: "copied %@ into %@: %.0f MB in %.2f s", path, settings.description, Double(end) / 1e6, copySeconds))

        var file: [Double] = [], postgres: [Double] = []
        var events = (file: 0, postgres: 0)
        for round in 0..<runs {
            for kind in (round % 2 == 0 ? ["file", "postgres"] : ["postgres", "file"]) {
                let start = clock.now
                if kind == "file" {
                    events.file = try LogReader(path: path).replay().model.seq
                    file.append((clock.now - start).seconds)
                } else {
                    events.postgres = try await PostgresLog.replay(settings, logger: quiet).model.seq
                    postgres.append((clock.now - start).seconds)
                }
            }
        }
        guard events.file == events.postgres else {
            throw BenchError(path: settings.description, "the file replays to seq \(events.file), the table to \(events.postgres)")
        }
        let (f, p) = (file.sorted()[file.count / 2], postgres.sorted()[postgres.count / 2])
        print(String(format: "replay of %d events (medians of %d, alternating): file %.3f s (%.0f events/s), PostgreSQL %.3f s (%.0f events/s): PostgreSQL / file = %.2f",
                     events.file, runs, f, Double(events.file) / f, p, Double(events.file) / p, f / p))
    }
}
