import AnnouncementsStore
import ArgumentParser

/// `--accept-broken-chain`, for the commands that open the log as its writer (`serve`, `init`,
/// `erase`): start-up refuses a log whose hash chain is broken unless the operator decides to
/// take it as it is.
struct ChainOptions: ParsableArguments {
    @Flag(help: ArgumentHelp("Open a log whose hash chain is broken as it is, each break logged as a warning (without it, start-up refuses the log, exit 65)."))
    var acceptBrokenChain = false

    /// What start-up does with a break of the chain.
    var chainCheck: ChainCheck { acceptBrokenChain ? .accept : .refuse }
}
