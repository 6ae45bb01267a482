# Sourced by scripts/tour.sh and scripts/doc-examples.sh: the one way the documents' examples are
# read, run and compared. Nothing here runs on its own; each function says what it takes.
#
# A document's example is a fenced block of `$ ` lines, each a command (a line ending in `\` goes
# on), and the lines after it up to the next command or the block's end: the output it shows.
# examples_parse writes each step as files in a folder: NNN.kind, NNN.cmd (the command as written)
# and NNN.expected (the output shown), with NNN.spec and NNN.where for a checked block's start.

# examples_tools NAME: curl and jq, installed when missing (as root, with apt), as the documents'
# reader would; exits 2 naming the missing one otherwise.
examples_tools() {
    local name=$1 tool
    if ! command -v curl > /dev/null || ! command -v jq > /dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
            echo "$name: installing curl and jq…"
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl jq; } > /dev/null 2>&1 || true
        fi
    fi
    for tool in curl jq; do
        command -v "$tool" > /dev/null || { echo "$name: the examples need $tool, which is not installed (Debian: apt-get install $tool)" >&2; exit 2; }
    done
}

# examples_parse MODE FILE DIR: the steps of FILE into DIR.
#   MODE tour: the fenced blocks between <!-- tour:begin --> and <!-- tour:end -->, every one;
#     kinds: serve (the command that runs `make serve`), run, and stop (<!-- tour:stop -->).
#   MODE doc: every fenced block at the start of a line; those whose opening fence follows the
#     line <!-- check: SPEC --> are checked: a `block` step (NNN.spec: SPEC, NNN.where: FILE:LINE),
#     then a `run` step per command. DIR/unmarked gets the count of the other blocks that hold a
#     `$ ` command, and DIR/unmarked.where a line for each: FILE:LINE, a tab, and the reason the
#     line <!-- not checked: REASON --> before its fence gives (empty when there is none).
examples_parse() {
    local mode=$1 file=$2 dir=$3
    awk -v dir="$dir" -v mode="$mode" -v file="$file" '
        function begin(kind) {
            if (out != "") close(out)
            if (base != "") close(base ".cmd")
            n++; base = sprintf("%s/%03d", dir, n)
            print kind > (base ".kind"); close(base ".kind")
            printf "" > (base ".expected"); close(base ".expected")
        }
        function fail(message) { print file ":" NR ": " message > "/dev/stderr"; failed = 1; exit 1 }
        mode == "tour" && /^<!-- tour:begin -->$/ { on = 1; next }
        mode == "tour" && /^<!-- tour:end -->$/ { on = 0; next }
        mode == "doc" { on = 1 }
        !on { next }
        mode == "tour" && /^<!-- tour:stop -->$/ { if (fence) { print "tour: <!-- tour:stop --> inside a code block" > "/dev/stderr"; failed = 1; exit 1 } begin("stop"); out = ""; next }
        mode == "doc" && !fence && /^<!-- check:.*-->$/ {
            pending = $0; sub(/^<!-- check:[ ]*/, "", pending); sub(/[ ]*-->$/, "", pending)
            if (pending == "") fail("a <!-- check: --> without a state")
            next
        }
        mode == "doc" && !fence && /^<!-- not checked:.*-->$/ {
            why = $0; sub(/^<!-- not checked:[ ]*/, "", why); sub(/[ ]*-->$/, "", why)
            if (why == "") fail("a <!-- not checked: --> without its reason")
            next
        }
        /^```/ {
            if (!fence) {
                fence = 1; dollars = 0
                checked = mode == "tour"
                if (pending != "") {
                    begin("block")
                    print pending > (base ".spec"); close(base ".spec")
                    print file ":" NR > (base ".where"); close(base ".where")
                    checked = 1; pending = ""
                }
                opened = NR; reason = why; why = ""
                if (checked && reason != "") fail("a block both checked and <!-- not checked: " reason " -->")
            } else {
                fence = 0
                if (mode == "doc" && !checked && dollars) { unmarked++; where = where file ":" opened "\t" reason "\n" }
            }
            out = ""; more = 0; next
        }
        pending != "" { fail("<!-- check: " pending " --> is not on the line before an opening fence") }
        why != "" { fail("<!-- not checked: " why " --> is not on the line before an opening fence") }
        !fence { next }
        !checked { if (/^\$ /) dollars = 1; next }
        more { print > (base ".cmd"); more = /\\$/; next }
        /^\$ / {
            command = substr($0, 3)
            begin(mode == "tour" && command ~ /(^|[ ;&])make serve( |$)/ ? "serve" : "run")
            print command > (base ".cmd")
            more = /\\$/; out = base ".expected"; next
        }
        out != "" { print > out }
        END {
            if (failed) exit 1
            if (mode == "doc") { print unmarked + 0 > (dir "/unmarked"); printf "%s", where > (dir "/unmarked.where") }
        }
    ' "$file"
}

# examples_mask FILE [SED_ARGUMENT…]: FILE with what varies from run to run masked: RFC 3339
# times (<time>), 64-digit hex (salts, hashes: <hash>) and an ETag's eight hex digits (<tag>); the
# arguments add sed expressions of the caller's own (`-e EXPRESSION` each).
examples_mask() {
    local file=$1; shift
    sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z/<time>/g' \
           -e 's/[0-9a-f]{64}/<hash>/g' \
           -e 's/("[0-9]+-[0-9]+-)[0-9a-f]{8}(-[a-z0-9]+)?"/\1<tag>\2"/g' "$@" "$file"
}

# examples_serve FOLDER WORKDIR COMMAND…: starts COMMAND (`env NAME=value… BINARY serve …`) in
# WORKDIR, its stdout in FOLDER/serve.out and its stderr in FOLDER/serve.err, and waits (60 s at
# most: a debug build on a busy machine starts slowly) for its first line, `listening on
# http://127.0.0.1:PORT`. Sets examples_pid (its process, to stop by id) and examples_port (empty
# when it did not say, or exited first).
examples_serve() {
    local folder=$1 workdir=$2 line
    shift 2
    : > "$folder/serve.out"
    (cd "$workdir" && exec "$@" > "$folder/serve.out" 2> "$folder/serve.err") &
    examples_pid=$!
    for _ in $(seq 1 1200); do
        line=$(head -1 "$folder/serve.out")
        [ -n "$line" ] && break
        kill -0 "$examples_pid" 2> /dev/null || break
        sleep 0.05
    done
    examples_port=$(sed -n '1s|^listening on http://127\.0\.0\.1:\([0-9][0-9]*\)$|\1|p' "$folder/serve.out")
}

# examples_stop PID: stops that server with SIGINT, as Ctrl-C in its terminal does, and returns
# its exit status.
examples_stop() {
    local status=0
    kill -INT "$1"
    wait "$1" || status=$?
    return "$status"
}

# examples_substitute COMMAND_FILE RUN_FILE PORT BINARY [SED_ARGUMENT…]: the command as it is run:
#     localhost:8080               -> 127.0.0.1:PORT   (the port the server really took)
#     .build/release/announcements -> BINARY
# and the caller's own sed expressions (`-e EXPRESSION` each).
examples_substitute() {
    local command_file=$1 run_file=$2 port=$3 binary=$4
    shift 4
    sed -e "s|localhost:8080|127.0.0.1:$port|g" -e "s|\\.build/release/announcements|'$binary'|g" "$@" \
        "$command_file" > "$run_file"
}

# examples_run SESSION RUN_FILE OUTPUT_FILE: runs the command in RUN_FILE in bash, as the next
# command of one terminal: SESSION/state holds the variables the commands before it set (sourced
# first), SESSION/status the status of the command before (its `$?`), SESSION/cwd its folder (a
# `cd` holds for the next command); each is updated after it. Its stdout and stderr go to
# OUTPUT_FILE, a last line without its newline (curl's) ended as a document shows it, before the
# next `$`. Returns the command's exit status. A command still running after EXAMPLES_TIMEOUT
# seconds (default 60) is killed (status 124): a hung step fails, never hangs make test.
examples_run() {
    local session=$1 run_file=$2 output=$3 status=0
    [ -f "$session/cwd" ] || pwd > "$session/cwd"
    local limit=(timeout "${EXAMPLES_TIMEOUT:-60}")
    (
        cd "$(cat "$session/cwd")"
        "${limit[@]}" bash -c '
            __tour_before=$(compgen -v)
            source "$1/state"
            __tour_command=$(cat "$2")
            (exit "$(cat "$1/status")")
            eval "$__tour_command"
            __tour_status=$?
            echo "$__tour_status" > "$1/status"
            pwd > "$1/cwd"
            for __tour_name in $(compgen -v); do
                case $__tour_name in __tour_*) continue ;; esac
                grep -qx "$__tour_name" <<< "$__tour_before" || declare -p "$__tour_name"
            done > "$1/state" 2> /dev/null
            exit "$__tour_status"
        ' tour "$session" "$run_file"
    ) > "$output" 2>&1 || status=$?
    [ -s "$output" ] && [ -n "$(tail -c 1 "$output" | tr -d '\0')" ] && echo >> "$output"
    return "$status"
}

# The scripts' arguments, `[--show] [BINARY]`: sets `show` (1 with --show) and `bin` (BINARY's real
# path; default the debug build), then has the tools; exits 2 when BINARY is not an executable.
examples_start() {
    local name=$1
    shift
    show=0
    if [ "${1:-}" = --show ]; then show=1; shift; fi
    bin=${1:-.build/debug/announcements}
    [ -x "$bin" ] || { echo "$name: $bin is not an executable file: build it first (swift build), or name one" >&2; exit 2; }
    bin=$(realpath "$bin")
    examples_tools "$name"
}
