import AnnouncementsDomain
import AnnouncementsStore
import Foundation

/// Search (issue 35): the index built over the live announcements of a replayed log, its memory
/// against the live text it indexes, and the time of two-word queries (the words' sets combined,
/// a page of ten taken and looked up in the state: a search request's work in the server, without
/// encoding the page).
struct SearchBenchmark {
    var path: String
    var queries: Int

    /// Two-word queries over the generated log's words, the last one a prefix as a search box sends
    /// it while a reader types; one word matching a few announcements, to see the other end.
    static let texts = ["security holi", "release meet", "quarterly upd", "café work", "team laun", "deploy benefits", "policy sched", "grails off"]

    func run() throws {
        let model = try LogReader(path: path).replay().model
        print("search over the log's live announcements (its generator writes 22 distinct words):")
        measure(model, texts: Self.texts)
        // Text as people write it has a long tail of words: the same announcements with each word
        // of their bodies and titles drawn from a vocabulary of 100,000 (Zipf's law, s = 1).
        var varied = ReadModel()
        var vocabulary = ZipfWords(count: 100_000, seed: 7)
        for (position, announcement) in model.announcements.enumerated() {
            // As many words as the texts had, about (a word and its space: seven bytes).
            let title = vocabulary.text(words: announcement.title.utf8.count / 7)
            let body = announcement.bodyText.map { "<p>" + vocabulary.text(words: $0.escaped.count / 7) + "</p>" }
            let draft = AnnouncementDraft(title: title, body: body)
            try varied.apply(Event(seq: position + 1, id: position + 1, at: announcement.createdAt, by: "bench", change: .created(draft)))
        }
        print("search over the same announcements with words drawn from 100,000 (Zipf):")
        measure(varied, texts: vocabulary.queries)
    }

    /// How many of the newest announcements the take-in measure adds again.
    static let takeInSample = 10_000

    /// Builds the index of `model`'s live announcements and times two-word queries `texts`.
    private func measure(_ model: ReadModel, texts: [String]) {
        let clock = ContinuousClock()
        var liveText = 0
        for announcement in model.announcements {
            liveText += announcement.title.utf8.count + (announcement.body?.utf8.count ?? 0)
        }
        let before = residentBytes()
        let buildStart = clock.now
        let index = model.searchIndex()
        let buildTime = clock.now - buildStart
        let grown = residentBytes() - before
        print(String(
            format: "  index: %d announcements, %d words, built in %.2f s; resident memory +%.1f MB (its own count: %.1f MB) for %.0f MB of live text",
            index.count, index.wordCount, buildTime.seconds, Double(grown) / 1e6, Double(index.storedBytes) / 1e6, Double(liveText) / 1e6
        ))
        // A write's take-in, on an index of this size: the newest announcements taken out of a
        // copy, then added again one at a time, in id order, as writes add them (their words
        // found, their ids added to their sets).
        let newest = model.byId.elements(in: max(0, model.count - Self.takeInSample)..<model.count)
        var takingIn = index
        for announcement in newest { takingIn.remove(announcement) }
        let takeInStart = clock.now
        for announcement in newest { takingIn.add(announcement) }
        let takeIn = clock.now - takeInStart
        print(String(
            format: "  take-in one at a time, as writes add them: %.1f µs per announcement (the newest %d, added again)",
            takeIn.seconds * 1e6 / Double(max(1, newest.count)), newest.count
        ))
        var times: [Duration] = []
        var found = 0
        var shown = 0
        for run in 0..<queries {
            guard let query = SearchQuery(texts[run % texts.count]) else { continue }
            let start = clock.now
            let (ids, total) = index.search(query, offset: 0, limit: 10)
            let page = ids.compactMap { model.announcement(id: $0) }
            times.append(clock.now - start)
            found += total
            shown += page.count
        }
        times.sort()
        let median = times[times.count / 2].seconds * 1000
        let p99 = times[min(times.count - 1, times.count * 99 / 100)].seconds * 1000
        print(String(format: "  two-word queries (%d): median %.3f ms, 99th percentile %.3f ms, %.0f announcements found per query, %.1f on its page", times.count, median, p99, Double(found) / Double(times.count), Double(shown) / Double(times.count)))
        print(String(format: "  memory / live text: %.3f", Double(max(grown, index.storedBytes)) / Double(liveText)))
    }

    /// The process's resident memory now (Linux: /proc/self/statm; elsewhere the peak).
    private func residentBytes() -> Int {
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
           let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) {
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        return Int(peakResidentMegabytes() * 1_000_000)
    }
}

/// Made-up words of two to nine letters, drawn with Zipf's law (the word of rank r about 1/r as
/// often as the first): a vocabulary with a long tail, as people's texts have.
struct ZipfWords {
    private var random: SplitMix
    private var cumulative: [Double]
    private var words: [String]

    init(count: Int, seed: UInt64) {
        random = SplitMix(state: seed)
        var total = 0.0
        cumulative = (1...count).map { rank in
            total += 1 / Double(rank)
            return total
        }
        // Each rank spelled from its own bits, mixed, so that words of every start are common and rare.
        var seen = Set<String>()
        var spelling = SplitMix(state: seed &+ 1)
        words = []
        while words.count < count {
            let length = 2 + spelling.next(below: 8)
            let word = String((0..<length).map { _ in Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(spelling.next(below: 26)))) })
            if seen.insert(word).inserted { words.append(word) }
        }
    }

    /// `words` words, separated by spaces.
    mutating func text(words count: Int) -> String {
        (0..<max(1, count)).map { _ in word() }.joined(separator: " ")
    }

    /// Two-word queries as a search box sends them: a common and a middling word, the second cut
    /// to its first three letters (a prefix), or two whole words.
    var queries: [String] {
        var queries: [String] = []
        for (first, second) in [(0, 40), (3, 200), (10, 1000), (25, 90), (1, 5), (60, 300)] {
            let common = words[first]
            let other = words[second]
            queries.append(common + " " + String(other.prefix(3)))
            queries.append(common + " " + other + " ")
        }
        return queries
    }

    private mutating func word() -> String {
        let target = Double(random.next() >> 11) / Double(1 << 53) * (cumulative.last ?? 1)
        var (low, high) = (0, cumulative.count - 1)
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return words[low]
    }
}
