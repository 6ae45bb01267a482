import AnnouncementsDomain
import Crypto
import HTTPTypes
import Hummingbird

/// Who may do what: the configured bearer tokens, each with its writer's name (the events' `by`)
/// and its role, and whether reading live announcements needs a token. Every route asks here, with
/// the permission it needs (`Permission`, whose table says which roles have it).
public struct Access: Sendable {
    /// Who sent a request: the name its token belongs to, and that token's role.
    public struct Caller: Sendable, Hashable {
        public var name: String
        public var role: Role
    }

    private let tokens: [(caller: Caller, digest: [UInt8])]
    public let reads: ReadAccess

    /// `tokens` are names with their tokens and roles; a nil token is a disabled one.
    public init(_ tokens: [(name: String, token: String?, role: Role)], reads: ReadAccess = .public) {
        self.tokens = tokens.compactMap { entry in
            entry.token.map { (Caller(name: entry.name, role: entry.role), Array(Self.digest(of: Substring($0)))) }
        }
        self.reads = reads
    }

    /// The caller whose token the request sends, or nil when it sends none: 401 for a token that
    /// is not a configured one, on whichever route asks (a revoked token is found at once), 400
    /// for a malformed one (see `bearerCaller`).
    /// Without `Authorization`, a read (GET, HEAD) takes the web client's session cookie
    /// (`WebSession`) instead; one whose token is not configured reads as none. An unsafe request
    /// never does: the web client's forms check where they come from first (`sessionCaller`).
    func caller(_ request: Request) throws(APIError) -> Caller? {
        guard request.headers.contains(.authorization) else {
            return request.method == .get || request.method == .head ? sessionCaller(request) : nil
        }
        return try bearerCaller(request)
    }

    /// The caller whose bearer token the request's `Authorization` sends, nil without one; never
    /// the session cookie (`/metrics`'s scraper sends its token so). 401 for a token that is not
    /// configured or another scheme; 400 for a malformed `Bearer` or two `Authorization` fields
    /// (RFC 6750's `invalid_request`, section 3.1).
    func bearerCaller(_ request: Request) throws(APIError) -> Caller? {
        // One pass over the fields, no array: this runs on every request with a token.
        var header: String?
        var count = 0
        for field in request.headers where field.name == .authorization {
            count += 1
            if header == nil { header = field.value }
        }
        guard let header else { return nil }
        guard count == 1 else {
            throw APIError(.badRequest, "send one Authorization header, not \(count)", headers: Challenge.invalidRequest)
        }
        guard let token = Self.bearerToken(in: header) else {
            // `Bearer` with what follows it missing or malformed (`Bearerabc` too: a space forgotten).
            let isBearer = header.utf8.prefix(6).elementsEqual("bearer".utf8) { ($0 | 0x20) == $1 }
            guard isBearer else {
                throw APIError(.unauthorized, "Authorization must be `Bearer <token>`: this server takes no other scheme", headers: Challenge.bearer)
            }
            throw APIError(.badRequest, "Authorization: Bearer needs a token after it, a space apart (`Bearer <token>`)", headers: Challenge.invalidRequest)
        }
        guard let caller = caller(token: token) else {
            throw APIError(.unauthorized, "the bearer token is not one of the configured tokens", headers: Challenge.invalidToken)
        }
        return caller
    }

    /// The caller, who must have `permission`: 401 without a token, 403 naming the roles that have
    /// it when the token's role has not. Only a caller with a configured token learns that no
    /// configured token has the role (and how to add one): to anyone else the server's tokens and
    /// roles stay unknown.
    func require(_ permission: Permission, _ request: Request) throws(APIError) -> Caller {
        // A token that is not configured is a 401 first, whatever else is wrong.
        guard let caller = try caller(request) else {
            throw APIError(.unauthorized, "this needs a token of role \(permission.rolesDescription): send Authorization: Bearer <token>", headers: Challenge.bearer)
        }
        guard tokens.contains(where: { $0.caller.role.may(permission) }) else {
            let example = permission.roles.contains(.editor) ? "editor: env:ANNOUNCEMENTS_TOKEN" : "audit: {token: env:AUDIT_TOKEN, role: \(permission.roles[0])}"
            throw APIError(.forbidden, "no configured token has role \(permission.rolesDescription), so this server does not allow it: add one under `tokens` in config.yaml (e.g. `\(example)`), set it, and restart the server", headers: Challenge.insufficientScope)
        }
        guard caller.role.may(permission) else {
            throw APIError.forbidden(needs: permission, role: caller.role, "the token of `\(caller.name)` has role \(caller.role)")
        }
        return caller
    }

    /// The caller of a read of live announcements: under `reads: token` one with a token is needed.
    func reader(_ request: Request) throws(APIError) -> Caller? {
        switch reads {
        case .public: try caller(request)
        case .token: try require(.read, request)
        }
    }

    /// The caller the request's session cookie names, or nil without one or for a token that is
    /// not (or no longer) configured.
    func sessionCaller(_ request: Request) -> Caller? {
        WebSession.token(in: request).flatMap { caller(token: Substring($0)) }
    }

    /// The caller whose token `token` is, or nil: the web client's sign-in.
    func caller(token: String) -> Caller? {
        caller(token: Substring(token))
    }

    /// The caller whose token this is. Compares SHA-256 digests of every token in constant time,
    /// so that neither the match nor its position leaks through timing.
    private func caller(token: Substring) -> Caller? {
        Self.digest(of: token).withUnsafeBytes { digest in
            var found: Caller?
            for candidate in tokens {
                var difference: UInt8 = 0
                for (a, b) in zip(candidate.digest, digest) { difference |= a ^ b }
                if difference == 0, found == nil { found = candidate.caller }
            }
            return found
        }
    }

    /// The token of an `Authorization` value `Bearer <token>` (the scheme in any case, one space
    /// or more after it, as RFC 9110 11.4 allows), or nil. Read as bytes: every request with a
    /// token reads it.
    static func bearerToken(in header: String) -> Substring? {
        let bytes = header.utf8
        let scheme = "bearer ".utf8
        guard bytes.count > scheme.count else { return nil }
        var end = bytes.index(bytes.startIndex, offsetBy: scheme.count)
        let lowercased = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte }
        guard bytes[..<end].elementsEqual(scheme, by: { lowercased($0) == $1 }) else { return nil }
        while end < bytes.endIndex, bytes[end] == UInt8(ascii: " ") { end = bytes.index(after: end) }
        guard end < bytes.endIndex else { return nil }
        return Substring(bytes[end...])
    }

    /// A token's SHA-256, hashed from its bytes where they are (no copy).
    private static func digest(of token: Substring) -> SHA256Digest {
        var hasher = SHA256()
        let hashed: Void? = token.utf8.withContiguousStorageIfAvailable { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        if hashed == nil { hasher.update(data: Array(token.utf8)) }
        return hasher.finalize()
    }
}

extension APIError {
    /// A 403 for a request outside its token's role: `"needs"` lists the roles that may, `"role"`
    /// is the token's, and the challenge says `insufficient_scope`.
    static func forbidden(needs permission: Permission, role: Role, _ reason: String) -> APIError {
        var error = APIError(.forbidden, "forbidden: \(reason); this needs role \(permission.rolesDescription)", headers: Challenge.insufficientScope)
        error.details = [.init("needs", .strings(permission.roles.map { "\($0)" })), .init("role", .string("\(role)"))]
        return error
    }
}
