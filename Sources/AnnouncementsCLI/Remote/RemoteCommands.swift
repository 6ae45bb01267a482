import AnnouncementsClient
import struct AnnouncementsDomain.SearchQuery
import ArgumentParser

/// `announcements list`: a page of announcements from a running server.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List announcements from a running server.",
        discussion: "API version 2.0 lists summaries (id, title); 1.0 full announcements; 3.0 summaries with when each was created and last changed, its revision and an excerpt."
    )

    @OptionGroup var server: ServerOptions<DefaultServer>

    @Option(help: "Skip this many announcements.") var offset = 0
    @Option(help: "Show at most this many (the server caps it at 100).") var max = 10
    @Option(name: .customLong("api-version"), help: "1.0, 2.0 or 3.0.") var apiVersion: AnnouncementsClient.APIVersion = .v2
    @Option(help: "Sort by id or title.") var sort: SortField = .id
    @Option(help: "asc or desc.") var order: SortOrder = .asc
    @Option(help: "Output format: table or json.") var format: RemoteFormat = .table

    func validate() throws {
        if offset < 0 { throw ValidationError("--offset takes 0 or more.") }
        if max < 1 { throw ValidationError("--max takes 1 or more.") }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            switch apiVersion {
            case .v1:
                let page = try await request { () async throws(ClientError) in try await client.announcements(offset: offset, max: max, sort: sort, order: order) }
                RemoteOutput.print(page, format: format)
            case .v2:
                let page = try await request { () async throws(ClientError) in try await client.summaries(offset: offset, max: max, sort: sort, order: order) }
                RemoteOutput.print(page, format: format, detailed: false)
            case .v3:
                let page = try await request { () async throws(ClientError) in try await client.entries(offset: offset, max: max, sort: sort, order: order) }
                RemoteOutput.print(page, format: format, detailed: true)
            }
        }
    }
}

/// `announcements search WORDS`: the announcements a running server finds for some words.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the announcements of a running server.",
        discussion: "Finds the announcements holding every word (in the title or the body's text, case and accents aside; the last word also as the start of a word), those with every word in the title first, each group newest first."
    )

    @OptionGroup var server: ServerOptions<DefaultServer>
    @Argument(help: "The words to look for.") var words: [String]
    @Option(help: "Skip this many announcements.") var offset = 0
    @Option(help: "Show at most this many (the server caps it at 100).") var max = 10
    @Option(help: "Output format: table or json.") var format: RemoteFormat = .table

    func validate() throws {
        if words.isEmpty { throw ValidationError("Name at least one word to search for.") }
        // The server's rules (the same domain code): a usage error here, not a refusal there.
        do throws(SearchQuery.Problem) {
            _ = try SearchQuery.checked(words.joined(separator: " "))
        } catch {
            throw ValidationError(error.describing("the search") + ".")
        }
        if offset < 0 { throw ValidationError("--offset takes 0 or more.") }
        if max < 1 { throw ValidationError("--max takes 1 or more.") }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            let text = words.joined(separator: " ")
            let page = try await request { () async throws(ClientError) in try await client.search(text, offset: offset, max: max) }
            RemoteOutput.print(page, format: format, detailed: true)
        }
    }
}

extension SortField: ExpressibleByArgument {}
extension SortOrder: ExpressibleByArgument {}

extension AnnouncementsClient.APIVersion: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "1", "1.0": self = .v1
        case "2", "2.0": self = .v2
        case "3", "3.0": self = .v3
        default: return nil
        }
    }
}

/// `announcements show ID`: one announcement from a running server.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one announcement from a running server.")

    @OptionGroup var server: ServerOptions<DefaultServer>
    @Argument(help: "The announcement's id.") var id: Int
    @Option(help: "Output format: table or json.") var format: RemoteFormat = .table

    func validate() throws {
        try AnnouncementID.check(id)
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            RemoteOutput.print(try await request { () async throws(ClientError) in try await client.announcement(id: id) }, format: format)
        }
    }
}

/// `announcements post`: create an announcement through a running server.
struct PostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "post", abstract: "Post a new announcement to a running server.")

    @OptionGroup var server: ServerOptions<DefaultServer>
    @Option(help: "The title.") var title: String
    @OptionGroup var body: BodyOptions
    @Option(help: "Output format: table or json.") var format: RemoteFormat = .table

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            let text = try body.text()
            RemoteOutput.print(try await request(writing: true) { () async throws(ClientError) in try await client.create(title: title, body: text) }, format: format)
        }
    }
}

/// `announcements edit ID`: change an announcement's title or body through a running server.
struct EditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Change an announcement on a running server.",
        discussion: "Only what is given changes; --clear-body removes the body."
    )

    @OptionGroup var server: ServerOptions<DefaultServer>
    @Argument(help: "The announcement's id.") var id: Int
    @Option(help: "The new title.") var title: String?
    @OptionGroup var body: BodyOptions
    @Flag(name: .customLong("clear-body"), help: "Remove the body.") var clearBody = false
    @OptionGroup var revision: RevisionOption
    @Option(help: "Output format: table or json.") var format: RemoteFormat = .table

    func validate() throws {
        try AnnouncementID.check(id)
        try revision.check(for: id)
        if clearBody, body.body != nil || body.bodyFile != nil { throw ValidationError("Use --clear-body or a new body, not both.") }
        if title == nil, body.body == nil, body.bodyFile == nil, !clearBody {
            throw ValidationError("Nothing to change: give --title, --body, --body-file or --clear-body.")
        }
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            let change: BodyChange = clearBody ? .clear : try body.text().map(BodyChange.set) ?? .keep
            let updated = try await request(writing: true) { () async throws(ClientError) in try await client.update(id: id, title: title, body: change, ifMatch: revision.ifMatch) }
            RemoteOutput.print(updated, format: format)
        }
    }
}

/// `announcements delete ID`: delete an announcement through a running server.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an announcement on a running server.")

    @OptionGroup var server: ServerOptions<DefaultServer>
    @Argument(help: "The announcement's id.") var id: Int
    @OptionGroup var revision: RevisionOption

    func validate() throws {
        try AnnouncementID.check(id)
        try revision.check(for: id)
    }

    func run() async throws {
        try await reportingErrors { () async throws(CLIError) in
            let client = try server.client()
            try await request(writing: true) { () async throws(ClientError) in try await client.delete(id: id, ifMatch: revision.ifMatch) }
            Output.line("deleted announcement \(id)")
        }
    }
}
