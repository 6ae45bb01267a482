import Crypto
import Foundation

/// The bearer tokens that may write, each with the writer's name (the events' `by`).
public struct Writers: Sendable {
    private let tokens: [(name: String, digest: [UInt8])]

    /// `writers` maps names to tokens; a nil token is a disabled writer.
    public init(_ writers: [(name: String, token: String?)]) {
        tokens = writers.compactMap { writer in
            writer.token.map { (writer.name, Array(SHA256.hash(data: Data($0.utf8)))) }
        }
    }

    /// True when at least one token is enabled.
    public var canWrite: Bool { !tokens.isEmpty }

    /// The name of the writer whose token this is. Compares SHA-256 digests of every token in
    /// constant time, so that neither the match nor its position leaks through timing.
    func writer(for token: String) -> String? {
        let digest = Array(SHA256.hash(data: Data(token.utf8)))
        var found: String?
        for candidate in tokens {
            var difference: UInt8 = 0
            for (a, b) in zip(candidate.digest, digest) { difference |= a ^ b }
            if difference == 0, found == nil { found = candidate.name }
        }
        return found
    }
}
