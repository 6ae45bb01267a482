import AnnouncementsDomain

extension LogReader {
    /// Checks the whole log (see `LogVerification`), reading every line with its hash.
    public func verify(rules: ValidationRules = ValidationRules(), expecting expected: LogHead? = nil) throws(LogError) -> VerifyReport {
        var verification = LogVerification(path: path, rules: rules, expecting: expected)
        var reader = self
        reader.computesHashes = true
        let summary = try reader.read { line throws(LogError) in
            verification.check(line)
            return .continue
        }
        return verification.report(tail: summary.tail?.bytes.count)
    }
}
