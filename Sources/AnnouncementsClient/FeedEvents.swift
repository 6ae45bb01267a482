/// The sequence `AnnouncementsClient.events(after:)` returns: the events of one feed, read as
/// they are asked for. Its iterators share the feed (each event goes to one of them), and tasks
/// that iterate it take turns; cancelling one ends only its own wait (it gets nil), never the
/// feed for the others, as `FeedReader.next()` says.
public struct FeedEvents: AsyncSequence, Sendable {
    public typealias Element = FeedEvent
    public typealias Failure = ClientError

    let reader: FeedReader

    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: FeedReader

        /// The next event; nil once the calling task is cancelled, and after the feed ended.
        /// Throws the `ClientError` that ends the feed.
        public mutating func next() async throws(ClientError) -> FeedEvent? {
            try await reader.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader)
    }
}
