import AnnouncementsClient
import AnnouncementsDomain
import ArgumentParser
import Foundation

/// What `--server`'s help says: a command that always talks to a server has a default one; one
/// that does so only when `--server` names it (`erase`) has none.
protocol ServerHelp {
    static var server: String { get }
}

extension ServerHelp {
    /// The server a command talks to without `--server` or $ANNOUNCEMENTS_SERVER.
    static var defaultServer: String { "http://127.0.0.1:8080" }
    /// The seconds a command waits for each answer without `--timeout` or $ANNOUNCEMENTS_TIMEOUT.
    static var defaultTimeout: Double { 5 }
}

/// `--server` of a command that talks to a server: $ANNOUNCEMENTS_SERVER, else the local one.
enum DefaultServer: ServerHelp {
    static let server = "The server's URL (default: $ANNOUNCEMENTS_SERVER, else \(defaultServer))."
}

/// `--server` of `erase`, which goes to a server only when it is named.
enum NamedServer: ServerHelp {
    static let server = "The URL of a running server, to erase through it (with an admin's token); without it the log itself is erased, and must be stopped. $ANNOUNCEMENTS_SERVER is not used."
}

/// `--server` and `--token`: the running server a command talks to, through `AnnouncementsClient`.
struct ServerOptions<Help: ServerHelp>: ParsableArguments {
    @Option(help: ArgumentHelp(Help.server, valueName: "url"))
    var server: String?

    @Option(help: ArgumentHelp("The bearer token: for writes, history and past states, and reads where the server wants one (default: $ANNOUNCEMENTS_TOKEN).", valueName: "token"))
    var token: String?

    @Option(help: ArgumentHelp("Seconds to wait for each answer (default: $ANNOUNCEMENTS_TIMEOUT, else \(Int(Help.defaultTimeout))).", valueName: "seconds"))
    var timeout: Double?


    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// What a problem names: the option when it was given, else the variable its value came from.
    private static func named(_ given: (some Any)?, _ option: String, _ variable: String) -> String {
        given != nil ? option : variable
    }

    /// A client for the server, speaking `version`.
    func client() throws(CLIError) -> AnnouncementsClient {
        let address = server ?? environment["ANNOUNCEMENTS_SERVER"] ?? Help.defaultServer
        guard let url = URL(string: address), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            let named = server != nil ? "--server takes" : "ANNOUNCEMENTS_SERVER must be"
            throw CLIError(.usage, "\(named) an http:// or https:// URL, like \(Help.defaultServer); got \"\(VisibleText.escaped(address))\"")
        }
        if let port = url.port, !(1...65535).contains(port) {
            let named = server != nil ? "--server" : "ANNOUNCEMENTS_SERVER"
            throw CLIError(.usage, "\(named)'s port must be 1 to 65535; got \(port) in \"\(VisibleText.escaped(address))\"")
        }
        // An empty token (ANNOUNCEMENTS_TOKEN= ) is no token.
        let token = (token ?? environment["ANNOUNCEMENTS_TOKEN"]).flatMap { $0.isEmpty ? nil : $0 }
        // One a header cannot carry (a space, a line break) would be left out of every request
        // without a word, and the server would say that none was sent. (Not echoed: a secret.)
        if let token, !token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            throw CLIError(.usage, "\(Self.named(self.token, "--token", "ANNOUNCEMENTS_TOKEN")) must be visible ASCII characters, without spaces or line breaks: the token as the config gives it")
        }
        let seconds: Double
        if let timeout {
            seconds = timeout
        } else if let text = environment["ANNOUNCEMENTS_TIMEOUT"], !text.isEmpty {
            guard let value = Double(text) else { throw CLIError(.usage, "ANNOUNCEMENTS_TIMEOUT must be a number of seconds, like 5; got \"\(text)\"") }
            seconds = value
        } else {
            seconds = Help.defaultTimeout
        }
        guard seconds > 0, seconds <= 3600 else {
            throw CLIError(.usage, "\(Self.named(timeout, "--timeout", "ANNOUNCEMENTS_TIMEOUT")) must be more than 0 seconds and at most 3600; got \(seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds))")
        }
        return AnnouncementsClient(baseURL: url, token: token, timeout: seconds)
    }
}

/// `--format`: how a remote command prints what the server answered.
enum RemoteFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json
}

extension CLIError {
    /// A failed request as one line and an exit code: the server unreachable (69), refused the
    /// token (77), answered something that is not the API (76), or said no (1).
    init(_ error: ClientError) {
        switch error {
        case .unreachable: self.init(.unavailable, error.description)
        case .invalidJSON, .unexpectedJSON, .badEventStream: self.init(.protocolError, error.description)
        case .status(let code, let message, _) where message.hasSuffix(ClientError.foreignAnswer) && !ClientError.temporaryStatuses.contains(code):
            // Another program answers there (a wrong port, a proxy's path), not a refusal of this API's.
            self.init(.protocolError, "\(error.description): is --server this API's address?")
        case .status(401, _, _), .status(403, _, _):
            self.init(.noPermission, "\(error.description) (pass --token, or set ANNOUNCEMENTS_TOKEN, to a token from the server's config whose role may do this)")
        case .status, .changedBySomeoneElse, .positionBeyondLog: self.init(.failure, error.description)
        }
    }
}

extension AsyncParsableCommand {
    /// Runs a request, turning a `ClientError` into a `CLIError` (`init(writing:)` for a write).
    func request<Value>(writing: Bool = false, _ body: () async throws(ClientError) -> Value) async throws(CLIError) -> Value {
        do {
            return try await body()
        } catch {
            throw writing ? CLIError(writing: error) : CLIError(error)
        }
    }
}

extension CLIError {
    /// A failed write: as any failed request, but one that got no answer after its tries, or a
    /// proxy's 502 or 504 (the server's own 5xx says what became of it), may have been made all
    /// the same (the client sent it with one `Idempotency-Key`, which a second command cannot
    /// send again): the error says to look before sending it again.
    init(writing error: ClientError) {
        self.init(error)
        let unanswered = switch error {
        // Any failure but one that kept the request from leaving: a connection cut mid-answer
        // is `badServerResponse` or `unknown` on Linux, not only `networkConnectionLost`.
        case .unreachable(_, let underlying): !Self.neverSent.contains(underlying.code)
        case .status(let code, _, _): code == 502 || code == 504
        default: false
        }
        if unanswered { message += "; the write may have been made all the same: look (`announcements show ID`, `list`) before sending it again" }
    }

    /// The failures that say a request never reached a server (no address, no connection, no
    /// trusted one): nothing it asked for can have been made.
    static let neverSent: Set<URLError.Code> = [
        .badURL, .unsupportedURL, .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost, .notConnectedToInternet,
        .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
        .serverCertificateNotYetValid, .clientCertificateRejected, .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection,
        .cancelled,
    ]
}
