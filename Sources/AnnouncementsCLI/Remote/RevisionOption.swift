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

    func validate() throws {
        guard let ifRevision else { return }
        guard Self.entityTag(ifRevision) != nil else {
            throw ValidationError("--if-revision takes a revision as show prints it (like \"7-8-6c5a5ef9\"); got \(ifRevision.debugDescription).")
        }
    }

    /// The revision as `If-Match` sends it, quoted as the server's tags are, whether or not the
    /// shell kept the quotes.
    var ifMatch: String? {
        ifRevision.flatMap(Self.entityTag)
    }

    /// `"tag"` for `tag` or `"tag"`; nil for an empty tag or one with a character a tag cannot
    /// hold (RFC 9110, section 8.8.3: visible ASCII but the double quote).
    private static func entityTag(_ revision: String) -> String? {
        let tag = revision.utf8.count >= 2 && revision.hasPrefix("\"") && revision.hasSuffix("\"") ? revision.dropFirst().dropLast() : Substring(revision)
        guard !tag.isEmpty, tag.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E && $0 != 0x22 }) else { return nil }
        return "\"\(tag)\""
    }
}
