import ArgumentParser

/// `--if-revision REV`: a write made only while the announcement is still at the revision `show`,
/// `post` and `edit` print (sent as `If-Match`); the server refuses it (412) once someone else has
/// changed the announcement, and nothing changes.
struct RevisionOption: ParsableArguments {
    @Option(
        name: .customLong("if-revision"),
        help: ArgumentHelp(
            "Change it only while it is at this revision (as show prints it); otherwise change nothing and exit 1.",
            valueName: "revision"
        )
    )
    var ifRevision: String?

    /// Checks, before the server is asked, that the revision is one of announcement `id`'s as the
    /// server writes them (`"7-8-6c5a5ef9"`, its quotes kept or not): one that never could be
    /// (`8`, `*`, another announcement's) would be refused as changed by someone else.
    func check(for id: Int) throws(ValidationError) {
        guard let ifRevision else { return }
        // `ID-SEQ-LINE`, and after it what the representation adds (`-v3`, `-gzip`).
        let parts = Self.tag(ifRevision)?.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false) ?? []
        guard parts.count == 3, let owner = Int(parts[0]), Int(parts[1]) != nil, !parts[2].isEmpty else {
            throw ValidationError("--if-revision takes a revision as show prints it (like \"\(id)-8-6c5a5ef9\"); got \(ifRevision.debugDescription).")
        }
        guard owner == id else {
            throw ValidationError("--if-revision \(ifRevision.debugDescription) is a revision of announcement \(owner), not of \(id).")
        }
    }

    /// The revision as `If-Match` sends it, quoted as the server's tags are.
    var ifMatch: String? {
        ifRevision.flatMap(Self.tag).map { "\"\($0)\"" }
    }

    /// The tag inside `"tag"`, or `tag` itself; nil for an empty one or one with a character a tag
    /// cannot hold (RFC 9110, section 8.8.3: visible ASCII but the double quote).
    private static func tag(_ revision: String) -> Substring? {
        let tag = revision.utf8.count >= 2 && revision.hasPrefix("\"") && revision.hasSuffix("\"") ? revision.dropFirst().dropLast() : Substring(revision)
        guard !tag.isEmpty, tag.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E && $0 != 0x22 }) else { return nil }
        return tag
    }
}
