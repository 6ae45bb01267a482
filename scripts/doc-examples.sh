#!/usr/bin/env bash
# Runs the marked example blocks of docs/http-api.md and docs/cli.md and checks what they print, as
# scripts/tour.sh does for README.md's tour (the same parsing, running, masks and comparison:
# scripts/examples-lib.sh), so that the documents and the product cannot drift apart.
#
# Which blocks: a fenced block whose opening fence follows the line
#     <!-- check: STATE [offline] [postgres] [#NAME] -->      or      <!-- check: same [#NAME] -->
# Its `$ ` lines are commands (a line ending in `\` goes on), the lines after each its output.
#   - STATE `tour`: a fresh server started as the tour starts it: the shipped config.yaml copied
#     into a temporary folder, ANNOUNCEMENTS_TOKEN=s3cret ANNOUNCEMENTS_AUDITOR_TOKEN=audit,
#     `serve --config COPY --port 0`.
#   - STATE `throwaway`: a fresh server on the throwaway server's config, copied from
#     docs/http-api.md's own block ("Examples and the state they assume": the lines of its
#     `cat > config.yaml <<'EOF'`), so that the two cannot drift, in a temporary folder of its
#     own: `serve --config COPY --host 127.0.0.1 --port 0`. The shell starts with the `export
#     AUDIT=…` that section tells the reader to run (read from it too).
#   - STATE `fresh`: a temporary folder with a copy of the shipped config.yaml, as the repository
#     folder of a fresh clone, and no server (a block makes its own throwaway folder from there).
#   - `offline`: that server is started, sent nothing, and stopped (SIGINT; it must exit 0), then
#     the commands run in its folder: the CLI reads the log the server made.
#   - `postgres`: the block needs PostgreSQL: make test's (ANNOUNCEMENTS_TEST_POSTGRES_URL), in a
#     table of this run's own (announcement_events_doc_TIME_PID, left there: make test's own
#     cluster is deleted after the run, a PostgreSQL of your own keeps it), written in the
#     documents as scripts/pg.sh's throwaway one,
#     postgres://postgres@127.0.0.1:29549/postgres and table announcement_events_demo. Without
#     it the block (and the blocks that go on from it) is not run, and the summary says so.
#   - `same`: the block goes on in the previous block's folder, server and shell (variables, `$?`
#     and the folder a `cd` moved to); `same #NAME` in those of the block marked `#NAME` (kept
#     until the end of the file), for an example that builds on one further up.
# Every block without `same` gets a fresh state, so blocks are independent and their ids and seqs
# are those of a fresh log. Commands run in the state's folder, in bash, one after the other as in
# one terminal (scripts/examples-lib.sh: examples_run), each for at most 60 s, with substitutions:
#     localhost:8080                        -> 127.0.0.1:PORT (the port the server really took)
#     .build/release/announcements          -> BINARY
#     `announcements` where a command starts (at the line's start, after NAME=value words, or
#         after `;`, `&&`, `||`, `|`, `(`)   -> BINARY
#     /tmp/try                              -> a folder inside the temporary one (the throwaway
#                                              folders the examples make: /tmp/try-erase …)
#     /dev/tcp/localhost/8080               -> /dev/tcp/127.0.0.1/PORT (bash's own connections)
#     the documents' PostgreSQL URL, table  -> the run's (see `postgres`; and back in the output)
# and ANNOUNCEMENTS_SERVER=http://127.0.0.1:PORT in the shell's environment: the CLI's default
# server, http://127.0.0.1:8080, is the port substitution's too. A command that starts a server,
# `[NAME=value…] announcements serve [ARGUMENT…]  # in another terminal`, is not run in the shell:
# the server starts in the background, in the shell's folder with its variables, with `--host
# 127.0.0.1 --port 0` added, and the commands after it talk to it (PORT is its port); the document
# shows no output for it (that is the other terminal's), and it is stopped (SIGINT; it must exit
# 0) when the state ends. Such a server in a `same` block replaces the state's. Variables of the caller's own
# that the examples read (ANNOUNCEMENTS_TOKEN, ANNOUNCEMENTS_SERVER, ANNOUNCEMENTS_TIMEOUT, AUDIT)
# are unset first. A command's exit status is not checked by itself (the documents show failing
# commands, and `echo $?` after them): its output is.
#
# What is compared: the output the document shows after each command, and what the command printed
# (stdout and stderr together), both with tour.sh's masks (examples_mask: RFC 3339 times <time>,
# 64-digit hex <hash>, an ETag's eight hex digits <tag>) and these, each as narrow as the thing
# that varies:
#   - a list's ETag ("list-2.0-6-06bd1cb1-…", "list-2.0-asof-8-1cf5df14-…"): the eight hex digits
#     after the seq (the start of that line's hash: salted, so it varies) -> <tag>;
#   - `X-Request-ID: bf5164-4c`: the six hex digits the process draws at start-up and the number
#     after the dash (each thread of the server counts its own) -> <id>;
#   - libcurl's "(Failed to connect to HOST port N after 0 ms: …)": the milliseconds it tried
#     for -> <ms> (2 on a busy machine, where the document shows 0);
#   - a log line's `snapshot.seconds=0.006751157`: how long writing the snapshot took -> <seconds>;
#   - a metric of seconds (`announcements_startup_seconds 0.003211603`, a histogram's `_sum`,
#     `process_start_time_seconds 1796063046.928`) -> <seconds>;
#   - `http_connections_open 1.0`: the scrape's own and any whose close the server has not yet
#     taken in (the commands before it closed theirs a moment ago) -> <count>;
# and, in what the command printed only:
#   - a carriage return at the end of a line (HTTP's header lines, as `curl -i` prints them) is
#     dropped;
#   - in an HTTP response's head (from its `HTTP/1.x` status line to the blank line), a `Date:`,
#     `Server:`, `X-Request-ID:`, `X-Content-Type-Options:` or `Content-Security-Policy:` header is
#     dropped when the document's output for that command lists no header of that name (the
#     document says its listings leave them out); a listed one is compared;
# and, on both sides, blank lines at the end of a command's output (the documents set commands
# apart with one). Nothing else: status codes, ids, titles, counts, sizes, event types, messages and
# every other header are compared as the document shows them.
#
# A block with a `$ ` command that is not checked says why on the line before its fence:
#     <!-- not checked: REASON -->          (a server's own log to its Ctrl-C, a full disk…)
# At the end it prints, per document, the blocks it checked and those it did not, with their lines
# and reasons; a block that is neither checked nor says why fails the run, so that nothing goes
# unchecked silently.
#
# Usage: scripts/doc-examples.sh [--show] [BINARY]   (default BINARY: .build/debug/announcements)
#   --show   print each command's real output, unmasked, to paste into a document after a change.
# Needs curl and jq (installed when missing, as root). Exit 0: every checked command printed what
# its document shows; 1: one did not (each is reported), or a block neither checked nor saying why
# not; 2: it could not run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/examples-lib.sh

examples_start doc-examples "$@"
unset ANNOUNCEMENTS_TOKEN ANNOUNCEMENTS_AUDITOR_TOKEN ANNOUNCEMENTS_SERVER ANNOUNCEMENTS_TIMEOUT AUDIT
documents=(docs/http-api.md docs/cli.md)

work=$(mktemp -d "${TMPDIR:-/tmp}/doc-examples-XXXXXX")
mkdir "$work/tmp"
pids=()  # every server started, by process id, to stop on exit
cleanup() {
    local p
    for p in "${pids[@]}"; do
        if kill -0 "$p" 2> /dev/null; then kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; fi
    done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The throwaway server's config and the shell's AUDIT, as docs/http-api.md writes them.
section=$(awk '/^## Examples and the state they assume$/ { on = 1; next } /^## / { on = 0 } on' docs/http-api.md)
awk '/^  cat > config\.yaml <<'"'"'EOF'"'"'$/ { on = 1; next } /^  EOF$/ { on = 0 } on { sub(/^  /, ""); print }' \
    <<< "$section" > "$work/throwaway.yaml"
grep -q '^tokens:' "$work/throwaway.yaml" \
    || { echo "doc-examples: no throwaway config (cat > config.yaml <<'EOF' … EOF) in docs/http-api.md's \"Examples and the state they assume\"" >&2; exit 2; }
audit=$(grep -o "export AUDIT='[^']*'" <<< "$section" | head -1 | sed "s/^export AUDIT='\\(.*\\)'\$/\\1/")
[ -n "$audit" ] || { echo "doc-examples: no \`export AUDIT='…'\` in docs/http-api.md's \"Examples and the state they assume\"" >&2; exit 2; }

# The PostgreSQL of a block marked `postgres`: make test's (ANNOUNCEMENTS_TEST_POSTGRES_URL), in a
# table of this run's own, written in the documents as the throwaway one of scripts/pg.sh. In the
# commands the document's URL and table become these (sed-escaped: a password may hold `&` or `#`);
# in the output, the URL as the CLI prints a log's place (`postgres://USER@HOST:PORT/DB#TABLE`,
# without a password) becomes the document's again.
doc_postgres_url='postgres://postgres@127.0.0.1:29549/postgres' doc_postgres_table=announcement_events_demo
postgres_url=${ANNOUNCEMENTS_TEST_POSTGRES_URL:-} postgres_table=announcement_events_doc_$(date +%s)_$$
sed_replacement() { printf '%s' "$1" | sed -e 's/[\\&#]/\\&/g'; }
postgres_substitutions=(-e "s#${doc_postgres_url//./\\.}#$(sed_replacement "$postgres_url")#g" -e "s#$doc_postgres_table#$postgres_table#g")
# A command that starts a server in another terminal: `announcements serve …  # in another
# terminal` (and maybe `, in this folder`), after NAME=value words.
serve_command='^(([A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*)[[:space:]]+)*announcements serve([[:space:]].*)?#[[:space:]]*in another terminal([[:space:]]*,[^#]*)?$'

failures=0
fail() {  # fail WHERE MESSAGE
    echo "doc-examples: FAILED at $1: $2" >&2
    failures=$((failures + 1))
}

# The output of a command as compared (see the header): FILE [EXPECTED_FILE] -> stdout.
normalize() {
    local file=$1 expected=${2:-}
    if [ -n "$expected" ]; then
        # The head's headers the document leaves out, by name: those of the five it lists none of.
        local omit
        omit=$(for name in date server x-request-id x-content-type-options content-security-policy; do
            grep -qi "^$name:" "$expected" || echo "$name"
        done | paste -sd' ')
        sed 's/\r$//' "$file" | awk -v omit=" $omit " '
            /^HTTP\/1\.[01] [0-9][0-9][0-9]/ { head = 1; print; next }
            head && /^$/ { head = 0 }
            head { name = tolower($0); sub(/:.*/, "", name); if (index(omit, " " name " ")) next }
            { print }'
    else
        cat "$file"
    fi | awk '/^$/ { blank++; next } { for (; blank > 0; blank--) print ""; print }' > "$file.normal"
    examples_mask "$file.normal" \
        -e 's/("list-[0-9]\.[0-9]-(asof-)?[0-9]+-)[0-9a-f]{8}-/\1<tag>-/g' \
        -e 's/^(X-Request-ID: )[0-9a-f]{6}-[0-9a-f]+/\1<id>/' \
        -e 's/( port [0-9]+ after )[0-9]+( ms: )/\1<ms>\2/' \
        -e 's/( snapshot\.seconds=)[0-9][0-9.e+-]*/\1<seconds>/' \
        -e 's/^((announcements|process)_[a-z_]+_seconds(_sum)?) [0-9.e+-]+$/\1 <seconds>/' \
        -e 's/^(http_connections_open) [0-9.]+$/\1 <count>/'
}

# start_server SESSION WHERE FOLDER COMMAND…: a server for SESSION, run in FOLDER, its output in
# SESSION/serve.out and serve.err; sets port, and the shell's ANNOUNCEMENTS_SERVER, to its port.
start_server() {
    local session=$1 where=$2 folder=$3
    shift 3
    examples_serve "$session" "$folder" "$@"
    pids+=("$examples_pid")
    session_pid[$session]=$examples_pid
    port=$examples_port
    [ -n "$port" ] || { echo "doc-examples: $where: the server did not print 'listening on http://127.0.0.1:PORT'; its stderr:
$(cat "$session/serve.err")" >&2; exit 1; }
    session_port[$session]=$port
    echo "declare -x ANNOUNCEMENTS_SERVER=\"http://127.0.0.1:$port\"" >> "$session/state"
}

checked_total=0 skipped_total=0 unexplained=0
summary=()
for document in "${documents[@]}"; do
    steps=$work/$(basename "$document" .md)
    mkdir "$steps"
    examples_parse doc "$document" "$steps" || exit 2
    blocks=0 commands=0 skipped=0 skipping=0
    session= port=
    declare -A named=()          # #NAME -> its session folder
    declare -A session_pid=() session_port=() session_skipped=() session_postgres=()
    stop_session() {  # stop_session FOLDER WHERE: its server, if it still runs
        local p=${session_pid[$1]:-} status=0
        [ -n "$p" ] || return 0
        session_pid[$1]=
        examples_stop "$p" || status=$?
        [ "$status" = 0 ] || fail "$2" "the server exited $status after SIGINT; its stderr:
$(tail -5 "$1/serve.err")"
    }
    for kind_file in "$steps"/*.kind; do
        [ -e "$kind_file" ] || continue
        base=${kind_file%.kind}
        case $(cat "$kind_file") in
        block)
            spec=$(cat "$base.spec") where=$(cat "$base.where")
            read -r -a words <<< "$spec"
            state=${words[0]} offline=0 postgres=0 name=
            for word in "${words[@]:1}"; do
                case $word in
                offline) offline=1 ;;
                postgres) postgres=1 ;;
                '#'?*) name=${word#\#} ;;
                *) echo "doc-examples: $where: <!-- check: $spec -->: unknown word '$word'" >&2; exit 2 ;;
                esac
            done
            if [ "$state" = same ]; then
                [ "$offline$postgres" = 00 ] || { echo "doc-examples: $where: <!-- check: same --> takes no 'offline' or 'postgres'" >&2; exit 2; }
                if [ -n "$name" ]; then
                    session=${named[$name]:-}
                    [ -n "$session" ] || { echo "doc-examples: $where: no block above is marked #$name" >&2; exit 2; }
                fi
                [ -n "$session" ] || { echo "doc-examples: $where: <!-- check: same --> with no block before it" >&2; exit 2; }
                if [ "${session_skipped[$session]:-0}" = 1 ]; then
                    skipping=1 skipped=$((skipped + 1))
                    echo "doc-examples: $where: not run, as the block it goes on from (it needs PostgreSQL)"
                    continue
                fi
                skipping=0 blocks=$((blocks + 1))
                port=${session_port[$session]}
                echo "doc-examples: $where: the same state ($spec)"
                continue
            fi
            # A fresh state: the previous block's server stops unless a later block may name it.
            if [ -n "$session" ] && ! [[ " ${named[*]} " == *" $session "* ]]; then
                stop_session "$session" "$where"
            fi
            session=$work/s$(basename "$base")-$(basename "$document" .md)
            mkdir -p "$session"
            [ -z "$name" ] || named[$name]=$session
            if [ "$postgres" = 1 ] && [ -z "${ANNOUNCEMENTS_TEST_POSTGRES_URL:-}" ]; then
                skipping=1 skipped=$((skipped + 1)) session_skipped[$session]=1
                echo "doc-examples: $where: not run: it needs PostgreSQL (ANNOUNCEMENTS_TEST_POSTGRES_URL; make test starts one)"
                continue
            fi
            skipping=0 blocks=$((blocks + 1))
            [ "$postgres" = 0 ] || session_postgres[$session]=1
            environment=() arguments=(--port 0)
            case $state in
            tour | fresh)
                cp config.yaml "$session/config.yaml"
                environment=(ANNOUNCEMENTS_TOKEN=s3cret ANNOUNCEMENTS_AUDITOR_TOKEN=audit)
                : > "$session/state"
                ;;
            throwaway)
                cp "$work/throwaway.yaml" "$session/config.yaml"
                arguments=(--host 127.0.0.1 --port 0)
                declare -p audit | sed 's/^declare -- audit=/declare -x AUDIT=/' > "$session/state"
                ;;
            *) echo "doc-examples: $where: <!-- check: $spec -->: the state is tour, throwaway, fresh or same" >&2; exit 2 ;;
            esac
            echo 0 > "$session/status"
            echo "$session" > "$session/cwd"
            session_port[$session]= port=
            if [ "$state" = fresh ]; then
                [ "$offline" = 0 ] || { echo "doc-examples: $where: <!-- check: fresh --> takes no 'offline' (no server runs)" >&2; exit 2; }
                echo "doc-examples: $where: $spec (no server)"
                continue
            fi
            start_server "$session" "$where" "$session" env "${environment[@]}" "$bin" serve --config "$session/config.yaml" "${arguments[@]}"
            echo "doc-examples: $where: $spec (port $port)"
            [ "$offline" = 0 ] || stop_session "$session" "$where"
            ;;
        run)
            [ "$skipping" = 0 ] || continue
            command=$(cat "$base.cmd")
            commands=$((commands + 1))
            echo "  \$ $(head -1 <<< "$command")"
            examples_substitute "$base.cmd" "$base.run" "$port" "$bin" -E \
                -e "s#(^|[;&|(][[:space:]]*)((([A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*)[[:space:]]+)*)announcements([[:space:]]|\$)#\\1\\2'$bin'\\5#g" \
                -e "s#/tmp/try#$work/tmp/try#g" \
                -e "s#/dev/tcp/localhost/8080#/dev/tcp/127.0.0.1/$port#g" \
                ${session_postgres[$session]:+"${postgres_substitutions[@]}"}
            if grep -Eq "$serve_command" "$base.cmd"; then
                # The server a reader starts in another terminal: in the background, on a free port,
                # with the shell's variables and folder; what it prints is that terminal's.
                [ ! -s "$base.expected" ] || fail "$where" "\$ $command
shows output; a server's is its own terminal's: show none"
                stop_session "$session" "$where"
                start_server "$session" "$where" "$(cat "$session/cwd")" bash -c \
                    'source "$1/state"; eval "exec env $2 --host 127.0.0.1 --port 0"' serve "$session" \
                    "$(sed -E 's/[[:space:]]+#[^"'"'"']*$//' "$base.run")"
                echo "    (port $port)"
                continue
            fi
            status=0
            examples_run "$session" "$base.run" "$base.actual" || status=$?
            [ -z "${session_postgres[$session]:-}" ] || sed -i -E -e "s|postgres(ql)?://[^#[:space:]]*#$postgres_table|$doc_postgres_url#$doc_postgres_table|g" \
                -e "s|$postgres_table|$doc_postgres_table|g" "$base.actual"
            if [ "$show" = 1 ]; then sed 's/^/      | /' "$base.actual"; fi
            if ! diff -u <(normalize "$base.expected") <(normalize "$base.actual" "$base.expected") > "$base.diff"; then
                fail "$where" "\$ $command
its output differs from $document's (masked; - $document, + this run; it exited $status):
$(tail -n +3 "$base.diff")"
            fi
            ;;
        esac
    done
    if [ -n "$session" ]; then stop_session "$session" "$document (end)"; fi
    for session in "${named[@]}"; do stop_session "$session" "$document (end)"; done
    unset named session_pid session_port session_skipped session_postgres
    unmarked=$(cat "$steps/unmarked")
    not_run=
    [ "$skipped" = 0 ] || not_run=", $skipped not run (no PostgreSQL)"
    summary+=("$document: $blocks blocks checked ($commands commands)$not_run; $unmarked blocks with a \`\$ \` command not checked:")
    while IFS=$'\t' read -r line reason; do
        if [ -n "$reason" ]; then
            summary+=("  $line: $reason")
        else
            summary+=("  $line: NO REASON GIVEN (mark it <!-- check: … --> or <!-- not checked: why -->)")
            unexplained=$((unexplained + 1))
        fi
    done < "$steps/unmarked.where"
    checked_total=$((checked_total + blocks)) skipped_total=$((skipped_total + skipped))
done

echo
printf '%s\n' "${summary[@]}"
[ "$failures" = 0 ] || echo "doc-examples: $failures commands printed other than their document shows ($bin)" >&2
[ "$unexplained" = 0 ] || echo "doc-examples: $unexplained blocks are neither checked nor say why not" >&2
[ "$failures$unexplained" = 00 ] || exit 1
not_run=
[ "$skipped_total" = 0 ] || not_run="; $skipped_total not run: they need PostgreSQL"
echo "doc-examples: all $checked_total checked blocks passed ($bin)$not_run"
