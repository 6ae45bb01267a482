import AnnouncementsDomain
import AnnouncementsStore
import Foundation

/// Full replay, measured side by side with two baselines in the same run: reading the file's bytes
/// (the ceiling), and Foundation's JSONDecoder on a sample of the same lines (the naive approach).
struct ReplayBenchmark {
    var path: String
    var runs: Int
    var decoderLines: Int

    func run() throws {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let megabytes = Double(size) / 1_000_000
        let clock = ContinuousClock()

        var times: [Duration] = []
        var indexTimes: [Duration] = []
        var events = 0
        var live = 0
        for _ in 0..<runs {
            let start = clock.now
            var replay = try LogReader(path: path).replay()
            times.append(clock.now - start)
            events = replay.model.seq
            live = replay.model.count
            let indexStart = clock.now
            replay.model.buildTitleIndex()
            indexTimes.append(clock.now - indexStart)
        }
        let indexTime = indexTimes.sorted()[indexTimes.count / 2]
        // The server's start-up replay also indexes every line (history, asOf, the feed, keys),
        // and follows the hash chain (each line's link computed, checked against the next `prev`):
        // measured without and with the chain, alternately, side by side.
        var indexedTimes: [Duration] = []
        var chainedTimes: [Duration] = []
        for _ in 0..<runs {
            let indexedStart = clock.now
            _ = try LogReader(path: path).replay(indexing: true)
            indexedTimes.append(clock.now - indexedStart)
            let chainedStart = clock.now
            _ = try LogReader(path: path).replay(indexing: true, chainCheck: .refuse)
            chainedTimes.append(clock.now - chainedStart)
        }
        let indexedTime = indexedTimes.sorted()[runs / 2]
        let chainedTime = chainedTimes.sorted()[runs / 2]
        let peak = peakResidentMegabytes()
        let replayTime = times.sorted()[times.count / 2]

        let readStart = clock.now
        let bytesRead = try readAll()
        let readTime = clock.now - readStart

        // The anchor's median too: one pass of JSONDecoder swung its rate by a third between runs.
        var decodes = try (0..<runs).map { _ in try decodeSample() }
        decodes.sort { $0.time < $1.time }
        let (decoded, decodedBytes, decodeTime) = decodes[runs / 2]

        let replaySeconds = replayTime.seconds
        print("log: \(path), \(events) events, \(String(format: "%.0f", megabytes)) MB, \(live) live announcements")
        print(String(format: "replay (median of %d):   %.3f s  %9.0f events/s  %6.0f MB/s  peak RSS %.0f MB",
                     runs, replaySeconds, Double(events) / replaySeconds, megabytes / replaySeconds, peak))
        print(String(format: "title index (server start): %.3f s for %d titles", indexTime.seconds, live))
        print(String(format: "replay with the line index (median of %d): %.3f s  %9.0f events/s",
                     runs, indexedTime.seconds, Double(events) / indexedTime.seconds))
        print(String(format: "replay with the line index and the hash chain followed (server start, median of %d): %.3f s  %9.0f events/s  (%.2fx the time without the chain)",
                     runs, chainedTime.seconds, Double(events) / chainedTime.seconds, chainedTime.seconds / indexedTime.seconds))
        print(String(format: "read file (ceiling):      %.3f s  %6.0f MB/s",
                     readTime.seconds, Double(bytesRead) / 1_000_000 / readTime.seconds))
        let decoderRate = Double(decodedBytes) / 1_000_000 / decodeTime.seconds
        print(String(format: "JSONDecoder (%d lines, median of %d): %.3f s  %9.0f events/s  %6.0f MB/s",
                     decoded, runs, decodeTime.seconds, Double(decoded) / decodeTime.seconds, decoderRate))
        print(String(format: "ratios: replay / read = %.2f, replay / JSONDecoder = %.1fx, start-up's replay (index and chain) / JSONDecoder = %.1fx",
                     (megabytes / replaySeconds) / (Double(bytesRead) / 1_000_000 / readTime.seconds),
                     (megabytes / replaySeconds) / decoderRate, (megabytes / chainedTime.seconds) / decoderRate))
    }

    private func readAll() throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
        defer { try? handle.close() }
        var total = 0
        while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty { total += chunk.count }
        return total
    }

    /// The naive replay's parsing step: one `JSONDecoder.decode` per line.
    private func decodeSample() throws -> (lines: Int, bytes: Int, time: Duration) {
        struct Line: Decodable {
            struct Data: Decodable { var title: String?; var body: String? }
            var seq: Int; var type: String; var id: Int; var at: String; var by: String; var data: Data?; var prev: String?
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
        defer { try? handle.close() }
        let sample = try handle.read(upToCount: decoderLines * 2000) ?? Data()
        let lines = sample.split(separator: UInt8(ascii: "\n")).prefix(decoderLines).map { Data($0) }
        let decoder = JSONDecoder()
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        for line in lines {
            _ = try decoder.decode(Line.self, from: line)
            count += 1
        }
        return (count, lines.reduce(0) { $0 + $1.count + 1 }, clock.now - start)
    }
}

/// The process's peak resident memory so far.
func peakResidentMegabytes() -> Double {
    var usage = rusage()
    #if canImport(Darwin)
    getrusage(RUSAGE_SELF, &usage)
    return Double(usage.ru_maxrss) / 1_000_000
    #else
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1000
    #endif
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
