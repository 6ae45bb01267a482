import AnnouncementsDomain

extension EventLog {
    /// Appends the complete lines of the log file at `path` after this log's durable lines, in
    /// durable batches of about `batchBytes` (what `import` does). Returns where they end. On a
    /// failure the batches already appended stay: the caller decides what to do with them.
    public func append(linesOf path: String, batchBytes: Int = 4 << 20) throws(LogError) -> Int64 {
        var end = durableEnd
        var batch: [UInt8] = []
        batch.reserveCapacity(batchBytes + 4096)
        func flush() throws(LogError) {
            end = try batch.withBytes { bytes throws(LogError) in try appendDurably(bytes, at: end) }
            batch.removeAll(keepingCapacity: true)
        }
        try LogReader(path: path).read { line throws(LogError) in
            batch += line.bytes
            batch.append(UInt8(ascii: "\n"))
            if batch.count >= batchBytes { try flush() }
            return .continue
        }
        if !batch.isEmpty { try flush() }
        return end
    }
}
