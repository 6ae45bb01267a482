#!/usr/bin/env bash
# Runs README.md's two-minute tour mechanically and checks what it prints, so that the README and
# the product cannot drift apart. The commands are read from README.md itself: the fenced blocks
# between <!-- tour:begin --> and <!-- tour:end -->, each `$ ` line a command (a line ending in
# `\` goes on), the lines after it up to the next command or the block's end its output.
#
#   - The command that runs `make serve` starts BINARY instead, with the environment variables
#     that command sets: `BINARY serve --config COPY --port 0`, where COPY is the shipped
#     config.yaml copied into a temporary folder (so that the log is made there, never in the
#     repository's events/), and the real port is read from the first line it prints,
#     `listening on http://127.0.0.1:PORT`.
#   - <!-- tour:stop --> stops it with SIGINT, as Ctrl-C in its terminal does; it must exit 0.
#   - Every other command runs in that temporary folder (where the CLI finds the copied
#     config.yaml, as it finds the shipped one in the repository folder), in bash, one after the
#     other as in one terminal (a variable set by one command is there for the next, and `$?` is
#     the status of the command before), with two substitutions:
#         localhost:8080               -> 127.0.0.1:PORT   (the port the server really took)
#         .build/release/announcements -> BINARY
#     Each must exit 0, and print what README.md shows after it, once both are masked: RFC 3339
#     times (<time>), 64-digit hex (salts, hashes: <hash>) and an ETag's eight hex digits
#     (<tag>) vary from run to run; everything else (status codes, ids, titles, event types,
#     counts) must be the same.
#
# Usage: scripts/tour.sh [--show] [BINARY]   (default BINARY: .build/debug/announcements)
#   --show   print each command's real output, unmasked, to paste into README.md after a change;
#            differences are reported but do not fail the run.
# Needs curl and jq (as the tour does; installed when missing, as root). Exit 0: every step passed; 1: a step differed or failed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The parsing, masking, running and comparing the documents' examples share (scripts/doc-examples.sh).
source scripts/examples-lib.sh

examples_start tour "$@"
grep -q '^<!-- tour:begin -->$' README.md && grep -q '^<!-- tour:end -->$' README.md \
    || { echo "tour: README.md has no <!-- tour:begin --> ... <!-- tour:end --> markers" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tour-XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
cp config.yaml "$work/config.yaml"
mkdir "$work/steps"

# The steps, in order, one set of files each: steps/NNN.kind (serve, run or stop), NNN.cmd (the
# command as README.md writes it) and NNN.expected (the output README.md shows after it).
examples_parse tour README.md "$work/steps" || exit 2

steps=("$work"/steps/*.kind)
[ -e "${steps[0]}" ] || { echo "tour: no commands found between the tour markers in README.md" >&2; exit 2; }
grep -qx serve "$work"/steps/*.kind || { echo "tour: the tour never starts the server (a \`make serve\` command)" >&2; exit 2; }
grep -qx stop "$work"/steps/*.kind || { echo "tour: the tour never stops the server (<!-- tour:stop -->)" >&2; exit 2; }

failed=0
fail() {  # fail STEP MESSAGE
    echo "tour: FAILED at step $1: $2" >&2
    if [ "$show" = 1 ]; then failed=1; else exit 1; fi
}

port=
# The state a step's shell leaves for the next one: its variables and its exit status.
: > "$work/state"
echo 0 > "$work/status"
echo "$work" > "$work/cwd"

for kind_file in "${steps[@]}"; do
    base=${kind_file%.kind}
    step=$(basename "$base")
    step=$((10#$step))
    kind=$(cat "$kind_file")
    command=$(cat "$base.cmd" 2> /dev/null || true)
    case $kind in
    serve)
        echo "tour: step $step: $command"
        # The variables the command sets (NAME=value words before `make serve`), for the server.
        environment=()
        for word in $command; do
            [[ $word =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] && environment+=("$word") || break
        done
        echo "      runs: ${environment[*]} $bin serve --config $work/config.yaml --port 0"
        examples_serve "$work" "$work" env "${environment[@]}" "$bin" serve --config "$work/config.yaml" --port 0
        pid=$examples_pid
        port=$examples_port
        [ -n "$port" ] || fail "$step" "the server did not print 'listening on http://127.0.0.1:PORT'; its stderr:
$(cat "$work/serve.err")"
        echo "      listening on port $port (README.md: 8080)"
        expected=$(grep -v '^…$' "$base.expected" | tail -1)
        [ "$expected" = "listening on http://127.0.0.1:8080" ] \
            || fail "$step" "README.md shows '$expected' where the server prints 'listening on http://127.0.0.1:8080'"
        if grep -q 'no token may write' "$work/serve.err"; then
            fail "$step" "the server is read-only with the tour's variables: $(grep 'no token may write' "$work/serve.err")"
        fi
        ;;
    stop)
        echo "tour: step $step: stop the server (Ctrl-C: SIGINT)"
        [ -n "$pid" ] || fail "$step" "no server is running"
        status=0; examples_stop "$pid" || status=$?
        pid=
        [ "$status" = 0 ] || fail "$step" "the server exited $status after SIGINT; its stderr:
$(tail -5 "$work/serve.err")"
        ;;
    run)
        echo "tour: step $step: \$ $command"
        [ -n "$port" ] || fail "$step" "a command before the server was started"
        # The substitutions (examples_substitute): the server's real port, and the binary under test.
        examples_substitute "$base.cmd" "$base.run" "$port" "$bin"
        status=0
        examples_run "$work" "$base.run" "$base.actual" || status=$?
        if [ "$show" = 1 ]; then sed 's/^/      | /' "$base.actual"; fi
        [ "$status" = 0 ] || fail "$step" "the command exited $status; it printed:
$(cat "$base.actual")"
        if ! diff -u <(examples_mask "$base.expected") <(examples_mask "$base.actual") > "$base.diff"; then
            fail "$step" "its output differs from README.md's (masked; - README.md, + this run):
$(tail -n +3 "$base.diff")"
        fi
        ;;
    esac
done

[ -z "$pid" ] || { echo "tour: the tour ends with the server still running: it must stop it (<!-- tour:stop -->)" >&2; exit 1; }
[ "$failed" = 0 ] || exit 1
echo "tour: all ${#steps[@]} steps passed ($bin)"
