import AnnouncementsConfig
import AnnouncementsDomain
import ArgumentParser

/// A command's failure: one line on stderr and an exit code from sysexits(3).
struct CLIError: Error, CustomStringConvertible {
    enum Code: Int32 {
        /// Problems were found (verify).
        case failure = 1
        /// A log line is invalid, or the log is not as it was written (a broken chain, lines lost
        /// since they were recorded): what a restart cannot mend.
        case dataError = 65
        /// A command line the command cannot use.
        case usage = 64
        /// A file is missing or unreadable.
        case noInput = 66
        /// The server (or the log's database) cannot be reached.
        case unavailable = 69
        /// An output file cannot be created (it exists, or its folder is not writable).
        case cantCreate = 73
        /// A write failed.
        case ioError = 74
        /// The log is locked by another process: try again later.
        case tempFail = 75
        /// The server's answer is not the API's.
        case protocolError = 76
        /// The server refused the token.
        case noPermission = 77
        /// The configuration is invalid.
        case config = 78
    }

    var code: Code
    var message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    init(_ error: LogError) {
        switch error.kind {
        case .invalidLine, .damaged: self.init(.dataError, error.description)
        case .unreadable: self.init(.noInput, error.description)
        case .uncreatable: self.init(.cantCreate, error.description)
        case .locked: self.init(.tempFail, error.description)
        case .unavailable: self.init(.unavailable, error.description)
        case .writeFailed, .unusable, .copiesLeft, .sealsLeft: self.init(.ioError, error.description)
        }
    }

    init(_ error: StoreError) {
        switch error {
        case .log(let log): self.init(log)
        case .invalid: self.init(.config, error.description)
        default: self.init(.failure, error.description)
        }
    }

    var description: String { message }
}

extension ParsableCommand {
    /// Runs `body`, turning a `CLIError` into one line on stderr and its exit code.
    func reportingErrors(_ body: () throws(CLIError) -> Void) throws {
        do {
            try body()
        } catch {
            Output.error(error.message)
            throw ExitCode(error.code.rawValue)
        }
    }

    /// `reportingErrors` for an asynchronous body.
    func reportingErrors(_ body: () async throws(CLIError) -> Void) async throws {
        do {
            try await body()
        } catch {
            Output.error(error.message)
            throw ExitCode(error.code.rawValue)
        }
    }
}
