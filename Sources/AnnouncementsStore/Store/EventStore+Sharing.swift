import AnnouncementsDomain
import Dispatch

/// A store on a shared log (`EventLog.isShared`: several processes, one PostgreSQL table): it
/// takes in the lines the others append, takes the writer role before it appends, and gives the
/// role up when another process asks for it. All of it happens on the committer, between batches
/// (see `drain`): the committer is the only one that changes the state, whoever wrote the lines.
extension EventStore {
    /// What the log told the committer that it has not acted on yet.
    struct LogNews {
        /// Another process appended lines: take them in.
        var appended = false
        /// Another process waits for the writer role: give it up once the appends under way end.
        var roleWanted = false

        var isEmpty: Bool { !appended && !roleWanted }
    }

    /// Whether other processes append to this store's log too (PostgreSQL with several nodes).
    public var isShared: Bool { log.isShared }

    /// Where writes through this store go instead: the address of the process that holds a shared
    /// log's writer role, as its last append named it, while this one does not (see
    /// `EventLog.writeHolder`); nil when they are made here.
    public var writeHolder: String? { log.writeHolder }

    /// Names this process's address in its appends to a shared log: the other processes send it
    /// their writes while it holds the writer role.
    public func advertise(_ address: String) { log.advertise(address) }

    /// Forgets `address` as where writes go (a write sent there was not answered in time); answers
    /// whether it was until now.
    @discardableResult
    public func forgetWriteHolder(_ address: String) -> Bool { log.forgetWriteHolder(address) }

    /// A write through this node was committed by the writer role's holder: writes through this
    /// node succeed, whatever became of the last one it made itself, and `health` says so (a node
    /// whose writes all go to the holder makes none of its own that would clear a failure). Not
    /// once the log is unusable.
    public func writeCommittedByHolder() {
        log.writeCommittedByHolder()
        syncer.writable()
    }

    /// Passes on what a shared log says to the committer (starting it when it is not running).
    func logChanged(_ change: LogChange) {
        // Another node erased: what this one kept of the lines may hold the texts; and the erased
        // event is in the log, to take in at once (its read models drop the announcement then),
        // however the notice of its append went.
        if case .erased = change { forgetFeedPages() }
        // Writes can succeed again: health says so before the next write.
        if case .writable = change { return syncer.writable() }
        perform(pipeline.state.withLock { pipeline in
            switch change {
            case .appended, .erased: pipeline.logChanged(appended: true, roleWanted: false)
            case .roleWanted: pipeline.logChanged(appended: false, roleWanted: true)
            case .writable: CommitPipeline.Wake.none
            }
        })
    }

    /// Returns once this store has the events up to `seq`, at most `timeout` later: for a reader
    /// that wrote through another node and wants to read its write here. Returns whether it has
    /// them; at once on a log no other process appends to (what it lacks will never come).
    /// With `asking` false, the lines are left to come with the log's notice (a write this node
    /// sent on to the holder: the notice of its commit is on its way), not asked for at once.
    public func waitUntilSeq(_ seq: Int, upTo timeout: Duration, asking: Bool = true) async -> Bool {
        // The published state, not the index: the index runs ahead of it for a moment.
        if self.seq >= seq { return true }
        guard log.isShared else { return false }
        // Ask for the lines now rather than at the log's next notice.
        if asking { logChanged(.appended) }
        await followers.wait(after: seq - 1, until: .now + timeout) { self.seq }
        return self.seq >= seq
    }

    /// Takes the writer role of a shared log, and takes in what others appended before it got it.
    /// Runs on the committer, with nothing handed over. While it waits in line for the role, it
    /// takes in what the holder appends, a few times a second, so that readers of this store (and
    /// `Min-Seq`) do not wait for its writers. At `deadline` (when the first of the writers it
    /// takes the role for has waited `roleWaitLimit`) it leaves the line and fails, unless the
    /// role came meanwhile. When the lines others appended cannot be taken in, the role is given
    /// up again: nothing may be appended after lines this store does not have.
    func takeWriterRole(until deadline: ContinuousClock.Instant) throws(LogError) {
        while true {
            let end = syncer.end
            var appended = try log.takeWriterRole(after: end, waitingAtMost: Self.roleWaitSlice, writesSince: deadline - Self.roleWaitLimit, until: deadline)
            if appended == nil, ContinuousClock.now >= deadline {
                appended = try log.leaveLine(after: end)
                guard appended != nil else {
                    throw LogError(.locked, path: path, message: "writes waited \(Self.roleWaitLimit) for the writer role, which another node holds and has not given up (see /health); nothing was written: retry")
                }
            }
            guard let appended else {
                catchUp()
                continue
            }
            do throws(LogError) {
                if !appended.isEmpty { try ingest(appended, at: end) }
            } catch {
                log.yieldWriterRole()
                throw error
            }
            return
        }
    }

    /// How long the committer waits in line for the writer role before it takes in what the
    /// holder appended meanwhile.
    static let roleWaitSlice = Duration.milliseconds(200)

    /// How long a write waits for the writer role at most (then it fails, with a 503 over HTTP):
    /// twice a stalled holder's `stallLimit`, which a live holder never comes near.
    static let roleWaitLimit = Duration.seconds(10)

    /// Takes in the lines others appended to a shared log since this store's last line. Runs on
    /// the committer, with nothing handed over. A failure is logged once, and `health` says
    /// `failing` until lines are taken in again (each notice tries again).
    func catchUp() {
        let end = syncer.end
        do throws(LogError) {
            let appended = try log.lines(after: end)
            if !appended.isEmpty { try ingest(appended, at: end) }
        } catch {
            followFailures.increment()
            let isNew = followFailure.withLock { failure in
                defer { failure = error }
                return failure?.message != error.message
            }
            if isNew {
                logger.error("cannot take in the lines other processes appended: this server serves the log as it was", metadata: ["log.path": "\(path)", "error": "\(error)"])
            }
        }
    }

    /// Takes in `bytes`, whole lines another process appended from `start` (where this store's
    /// lines end): checks that each follows the one before it (its seq, its `prev`), then applies,
    /// indexes and publishes them as the committer does its own lines. All or nothing.
    func ingest(_ bytes: [UInt8], at start: Int64) throws(LogError) {
        var model = published.withLock { $0.model }
        var hash = committer.lastHash
        var located: [(seq: Int, id: Int, offset: Int64, length: Int, link: LineHash)] = []
        var keys: [String: Int] = [:]
        var lineStart = 0
        while lineStart < bytes.count {
            let number = model.seq + 1
            guard let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw LogError(.invalidLine, path: path, line: number, message: "the lines read back do not end with a newline")
            }
            let line = bytes[lineStart..<newline]
            let event: Event
            do throws(LineProblem) {
                event = try EventParser.parse(line)
            } catch {
                throw LogError(.invalidLine, path: path, line: number, message: error.message)
            }
            if let prev = event.prev, prev != hash {
                throw LogError(.invalidLine, path: path, line: number, message: "its prev is not the hash of the line before it: the log was changed under the server")
            }
            let (seq, id, key) = (event.seq, event.id, event.key)
            do throws(ApplyProblem) {
                try model.apply(event)
            } catch {
                throw LogError(.invalidLine, path: path, line: number, message: error.message)
            }
            let link = LineHash(link: line)
            hash = link
            located.append((seq, id, start + Int64(lineStart), line.count, link))
            if let key { keys[key] = seq }
            lineStart = newline + 1
        }
        committer.keys.merge(keys) { $1 }
        _ = publish(model, hash: hash, waking: true, changed: located.map(\.id)) { index in
            for line in located { index.add(seq: line.seq, id: line.id, offset: line.offset, length: line.length, link: line.link) }
        }
        syncer.advance(to: start + Int64(bytes.count))
        log.tookIn(upTo: start + Int64(bytes.count))
        let wasFailing = followFailure.withLock { failure in
            defer { failure = nil }
            return failure != nil
        }
        if wasFailing {
            logger.info("took in the lines other processes appended again", metadata: ["log.path": "\(path)", "event.seq": "\(model.seq)"])
        }
        logger.debug("took in lines another process appended", metadata: ["log.path": "\(path)", "event.seq": "\(model.seq)", "log.lines": "\(located.count)"])
    }

    /// Erasures (this store's, or other processes') whose overwritten lines a store has not read
    /// back yet: history and the feed serve their lines sealed meanwhile (`sealedView(of:)`).
    struct UnconfirmedSeals {
        /// The erased announcements.
        var erased: Set<Int> = []
        /// The looks at them in a row that found some not sealed yet.
        var looks = 0
        /// Whether a look is scheduled: one chain of looks at a time.
        var isLooking = false
    }

    /// Looks for the overwritten lines of the announcements just `erased` (by this store, whose
    /// own overwrite also ends the wait, or by another process), until it reads them back sealed;
    /// then drops the feed's pages, as another process's notice does. Pages read between an erased
    /// event and its overwrite hold the texts, and the notice can be missed (this store's listening
    /// connection was reconnecting, or the notice failed): without a look of its own, this store
    /// would serve them for ever. Twice a second for ten seconds, then every five seconds, with a
    /// warning (an overwrite failed, or the process that erased died before its overwrite, which
    /// its next start finishes).
    func awaitSeals(of erased: some Sequence<Int>) {
        let start = unconfirmedSeals.withLock { seals in
            seals.erased.formUnion(erased)
            guard !seals.isLooking else { return false }
            seals.isLooking = true
            return true
        }
        if start { lookForSealsSoon(after: 0) }
    }

    /// How often a store looks for the overwritten lines of an erasure: at first,
    /// and after `patientLooks` looks in a row.
    static let sealLookInterval = DispatchTimeInterval.milliseconds(500)
    static let slowSealLookInterval = DispatchTimeInterval.seconds(5)
    static let patientLooks = 20

    private func lookForSealsSoon(after looks: Int) {
        let interval = looks < Self.patientLooks ? Self.sealLookInterval : Self.slowSealLookInterval
        DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [weak self] in
            // A read of the log: with the followers' reads, which may wait on the network.
            self?.feedWorker.async { [weak self] in self?.lookForSeals() }
        }
    }

    /// One look at the lines of the erasures `awaitSeals` waits for (on `feedWorker`).
    private func lookForSeals() {
        guard !pipeline.state.withLock({ $0.isClosed }) else { return }
        let waiting = looksForSeals.load(ordering: .relaxed) ? unconfirmedSeals.withLock { $0.erased } : []
        // Sealed once no line of it is left to seal (a line that cannot be read counts as not yet).
        let sealed = waiting.filter { (try? sealing($0))?.replacements.isEmpty == true }
        let (left, looks) = unconfirmedSeals.withLock { seals in
            seals.erased.subtract(sealed)
            seals.looks = seals.erased.isEmpty ? 0 : seals.looks + 1
            // The chain ends here, or goes on; an erasure taken in meanwhile keeps it going.
            seals.isLooking = !seals.erased.isEmpty
            return (seals.erased.sorted(), seals.looks)
        }
        if !sealed.isEmpty {
            logger.debug("read back the overwritten lines of an erasure", metadata: ["log.path": "\(path)", "event.ids": "\(sealed.sorted())"])
            forgetFeedPages()
        }
        if looks == Self.patientLooks {
            logger.warning("an erasure has not overwritten the lines of these announcements yet (its overwrite failed, or another process's has not come; erasing again or the next start finishes it): history and the feed serve those lines sealed meanwhile; looking every 5 s", metadata: ["log.path": "\(path)", "event.ids": "\(left)"])
        }
        if !left.isEmpty { lookForSealsSoon(after: looks) }
    }
}
