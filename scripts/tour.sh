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

show=0
if [ "${1:-}" = --show ]; then show=1; shift; fi
bin=${1:-.build/debug/announcements}
[ -x "$bin" ] || { echo "tour: $bin is not an executable file: build it first (swift build), or name one" >&2; exit 2; }
bin=$(realpath "$bin")
# The tour's own tools, installed when missing (as root, with apt), as the README's reader would.
if ! command -v curl > /dev/null || ! command -v jq > /dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
        echo "tour: installing curl and jq…"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl jq; } > /dev/null 2>&1 || true
    fi
fi
for tool in curl jq; do
    command -v "$tool" > /dev/null || { echo "tour: the tour needs $tool, which is not installed (Debian: apt-get install $tool)" >&2; exit 2; }
done
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
awk -v dir="$work/steps" '
    function begin(kind) { n++; base = sprintf("%s/%03d", dir, n); print kind > (base ".kind"); close(base ".kind"); printf "" > (base ".expected") }
    /^<!-- tour:begin -->$/ { on = 1; next }
    /^<!-- tour:end -->$/ { on = 0; next }
    !on { next }
    /^<!-- tour:stop -->$/ { if (fence) { print "tour: <!-- tour:stop --> inside a code block" > "/dev/stderr"; exit 1 } begin("stop"); out = ""; next }
    /^```/ { fence = !fence; out = ""; more = 0; next }
    !fence { next }
    more { print > (base ".cmd"); more = /\\$/; next }
    /^\$ / {
        command = substr($0, 3)
        begin(command ~ /(^|[ ;&])make serve( |$)/ ? "serve" : "run")
        print command > (base ".cmd")
        more = /\\$/; out = base ".expected"; next
    }
    out != "" { print > out }
' README.md

steps=("$work"/steps/*.kind)
[ -e "${steps[0]}" ] || { echo "tour: no commands found between the tour markers in README.md" >&2; exit 2; }
grep -qx serve "$work"/steps/*.kind || { echo "tour: the tour never starts the server (a \`make serve\` command)" >&2; exit 2; }
grep -qx stop "$work"/steps/*.kind || { echo "tour: the tour never stops the server (<!-- tour:stop -->)" >&2; exit 2; }

# What varies from run to run, masked in both the expected and the real output.
mask() {
    sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z/<time>/g' \
           -e 's/[0-9a-f]{64}/<hash>/g' \
           -e 's/("[0-9]+-[0-9]+-)[0-9a-f]{8}(-[a-z0-9]+)?"/\1<tag>\2"/g' "$1"
}

failed=0
fail() {  # fail STEP MESSAGE
    echo "tour: FAILED at step $1: $2" >&2
    if [ "$show" = 1 ]; then failed=1; else exit 1; fi
}

port=
# The state a step's shell leaves for the next one: its variables and its exit status.
: > "$work/state"
echo 0 > "$work/status"

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
        : > "$work/serve.out"
        (cd "$work" && exec env "${environment[@]}" "$bin" serve --config "$work/config.yaml" --port 0 > "$work/serve.out" 2> "$work/serve.err") &
        pid=$!
        for _ in $(seq 1 600); do
            line=$(head -1 "$work/serve.out")
            [ -n "$line" ] && break
            kill -0 "$pid" 2> /dev/null || break
            sleep 0.05
        done
        port=$(sed -n '1s|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$work/serve.out")
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
        kill -INT "$pid"
        status=0; wait "$pid" || status=$?
        pid=
        [ "$status" = 0 ] || fail "$step" "the server exited $status after SIGINT; its stderr:
$(tail -5 "$work/serve.err")"
        ;;
    run)
        echo "tour: step $step: \$ $command"
        [ -n "$port" ] || fail "$step" "a command before the server was started"
        # The substitutions, spelled out: the server's real port, and the binary under test.
        sed -e "s|localhost:8080|127.0.0.1:$port|g" -e "s|\\.build/release/announcements|'$bin'|g" \
            "$base.cmd" > "$base.run"
        status=0
        (
            cd "$work"
            bash -c '
                __tour_before=$(compgen -v)
                source "$1/state"
                __tour_command=$(cat "$2")
                (exit "$(cat "$1/status")")
                eval "$__tour_command"
                __tour_status=$?
                echo "$__tour_status" > "$1/status"
                for __tour_name in $(compgen -v); do
                    case $__tour_name in __tour_*) continue ;; esac
                    grep -qx "$__tour_name" <<< "$__tour_before" || declare -p "$__tour_name"
                done > "$1/state" 2> /dev/null
                exit "$__tour_status"
            ' tour "$work" "$base.run"
        ) > "$base.actual" 2>&1 || status=$?
        # A last line without its newline (curl's) ends as the README shows it: before the next `$`.
        [ -s "$base.actual" ] && [ -n "$(tail -c 1 "$base.actual")" ] && echo >> "$base.actual"
        if [ "$show" = 1 ]; then sed 's/^/      | /' "$base.actual"; fi
        [ "$status" = 0 ] || fail "$step" "the command exited $status; it printed:
$(cat "$base.actual")"
        if ! diff -u <(mask "$base.expected") <(mask "$base.actual") > "$base.diff"; then
            fail "$step" "its output differs from README.md's (masked; - README.md, + this run):
$(tail -n +3 "$base.diff")"
        fi
        ;;
    esac
done

[ -z "$pid" ] || { echo "tour: the tour ends with the server still running: it must stop it (<!-- tour:stop -->)" >&2; exit 1; }
[ "$failed" = 0 ] || exit 1
echo "tour: all ${#steps[@]} steps passed ($bin)"
