import ArgumentParser

/// `--accept-broken-chain`, for the commands that copy the log (`export`, `backup`): a copy whose
/// only problems are breaks of the hash chain (a log served with `--accept-broken-chain`) is kept,
/// each break a note; without it, such a copy is refused as any copy that does not verify.
struct CopyChainOptions: ParsableArguments {
    @Flag(help: ArgumentHelp("Keep a copy whose only problems are breaks of the hash chain (a log served with --accept-broken-chain), each break a note (without it, such a copy is refused, exit 65)."))
    var acceptBrokenChain = false
}
