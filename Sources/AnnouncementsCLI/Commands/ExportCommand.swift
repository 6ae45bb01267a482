import AnnouncementsDomain
import AnnouncementsStore
import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `announcements export`: the log's lines into a new file, byte for byte.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Copy the log (a file or PostgreSQL) into a new log file, byte for byte.",
        discussion: """
            Reads the log the config's `storage:` names (or --log) without taking its writer role, so \
            it may run beside a server: the copy holds every line durable when the read began. The \
            file is created (never overwritten) and synced; the command prints its head (SEQ:SHA256), \
            which `verify --log FILE` prints too. `import --from FILE` copies it back into a log.
            """
    )

    @OptionGroup var options: LogOptions

    @Option(help: ArgumentHelp("The new log file (it must not exist).", valueName: "file"))
    var to: String

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let source = try options.source()
            let name = LogLines.name(of: source)
            var count = 0
            var last: (seq: Int, line: [UInt8])?
            let (tail, size) = try await NewFile.create(to) { file throws(LogError) in
                let tail = try await LogLines.read(source) { line throws(LogError) in
                    try file.append(line: line.bytes)
                    count += 1
                    // The head names the last line's seq, as `verify` prints it.
                    last = (line.seq, Array(line.bytes))
                    return .continue
                }
                return (tail, file.size)
            }
            if let tail { Output.note("\(name): left out \(tail) bytes at the end with no newline (a line being written, or torn by a crash)") }
            let head = last.map { LogHead(seq: $0.seq, hash: LineHash(link: $0.line)).description } ?? "-"
            Output.line("exported \(Output.count(count)) events (\(Output.count(Int(size))) bytes) from \(name) to \(to)\n  head: \(head)")
        }
    }
}
