import AnnouncementsDomain
import ArgumentParser
import Foundation
import Logging

/// `announcements`: the event-sourced announcement store's command line.
@main
struct Announcements: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "announcements",
        abstract: "An event-sourced announcement store: serve it, replay, audit and verify its log, and use a running server.",
        discussion: """
            serve, init, replay, history, verify, export, import, backup, erase and upgrade work on the log \
            named by --log, or by the storage of --config (default ./config.yaml); the read-only ones \
            (replay, history, verify, export, backup) never write it and may run while a server writes. \
            list, search, show, post, edit and delete talk to a running server (--server, --token), as \
            does history --follow.
            """,
        version: Release.version,
        subcommands: [
            ServeCommand.self, InitCommand.self, ReplayCommand.self, HistoryCommand.self, VerifyCommand.self, ExportCommand.self, ImportCommand.self, BackupCommand.self, EraseCommand.self, UpgradeCommand.self,
            ListCommand.self, SearchCommand.self, ShowCommand.self, PostCommand.self, EditCommand.self, DeleteCommand.self,
        ]
    )
}
