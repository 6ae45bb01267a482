#!/usr/bin/env bash
# `make bench`: every figure of BENCHMARKS.md in one run, each goal of issue 14 beside the anchor
# it is measured against in the same run, and at the end a table of the goals: measured, anchor,
# ratio, target, met or NOT met. The parts:
#
#   replay      AnnouncementsBench replay (against reading the file and Foundation's JSONDecoder),
#               between two folds of the same log in Python with orjson (scripts/replay-fold.py)
#   appends     AnnouncementsBench append (the store alone: 1, 16 and 64 writers, feed followers)
#   HTTP        scripts/http-bench.sh (the routes against a bare Hummingbird server, durable POSTs
#               against their limit (the bare echo and the disk's own sync) and the store's append,
#               and against the peers of scripts/peers/ on PostgreSQL; SSE followers)
#   PostgreSQL  scripts/pg-log-bench.sh (the store's appends on a PostgreSQL log beside the file
#               log and pgbench inserting the same rows; replay from a table beside the file)
#   nodes       scripts/nodes-bench.sh (three servers on one table: durable POSTs at 16 and 64
#               connections all through one node beside spread over two and three, with issue 38's
#               goal and the CPU per POST; how soon a write is served by another node)
#   search      AnnouncementsBench search (the index of the live announcements: its build, its
#               memory against the live text, two-word queries)
#   start-up    scripts/startup-bench.sh (to `listening` on the bench log, cold and after SIGTERM)
#
# The Makefile builds the release binaries and generates the log first. Environment (optional):
# BENCH_DIR (default .bench), BENCH_EVENTS (default 1000000: the log is BENCH_DIR/log-v3-N.jsonl),
# BENCH_APPEND_SECONDS (seconds per run of the append benchmark, default 3), and those of
# scripts/http-bench.sh (HTTP_BENCH_SECONDS, HTTP_BENCH_ROUNDS, HTTP_BENCH_PG, HTTP_BENCH_FOLLOWERS)
# and scripts/startup-bench.sh. The HTTP part takes about 10 minutes with the defaults (4 rounds,
# the peers, the followers: 2 rounds took 5), the others a few more, besides generating the log.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

export BENCH_DIR=${BENCH_DIR:-.bench}
BENCH_EVENTS=${BENCH_EVENTS:-1000000}
# (`v2`: the current line format; a log generated before it is left alone.)
LOG=$BENCH_DIR/log-v3-$BENCH_EVENTS.jsonl
BENCH_BIN=.build/release/AnnouncementsBench
[ -x "$BENCH_BIN" ] || { echo "$BENCH_BIN is missing: run 'make release' first"; exit 1; }
[ -f "$LOG" ] || { echo "$LOG is missing: run '$BENCH_BIN generate --events $BENCH_EVENTS --out $LOG'"; exit 1; }

export BENCH_GOALS
BENCH_GOALS=$(mktemp "${TMPDIR:-/tmp}/bench-goals-XXXXXX")
trap 'rm -f "$BENCH_GOALS"' EXIT
goal() { (IFS=$'\t'; echo "$*") >> "$BENCH_GOALS"; }
section() { printf '\n== %s ==\n' "$1"; }
# The figure before the word "events/s" on the first line matching PATTERN.
rate_in() { awk -v pattern="$1" '$0 ~ pattern { for (i = 2; i <= NF; i++) if ($i == "events/s" || $i == "events/s,") { print $(i - 1); exit } }'; }

section "Replay"
# orjson, for the Python baseline: installed when missing into .build/python-tools, if pip can.
source scripts/python-tools.sh
PYTHON=
if ! command -v python3 >/dev/null; then
  echo "the Python baseline is skipped: no python3"
elif python_tools orjson; then
  PYTHON=$PYTHON_TOOLS/bin/python
else
  echo "the Python baseline is skipped: $PYTHON_TOOLS_SKIP"
fi
FOLDS=
LIVE_TEXT_MB=
# fold: the Python fold of the log, printed; its rate goes to FOLDS, its live text to LIVE_TEXT_MB.
fold() {
  local line
  line=$("$PYTHON" scripts/replay-fold.py "$LOG")
  echo "$line"
  FOLDS+=" $(rate_in "python orjson fold" <<< "$line")"
  LIVE_TEXT_MB=$(awk '{ for (i = 2; i < NF; i++) if ($i == "MB" && $(i + 1) == "of") print $(i - 1) }' <<< "$line")
}
# Python, the store, Python again: the drift falls on both sides.
[ -z "$PYTHON" ] || fold
out=$("$BENCH_BIN" replay "$LOG")
echo "$out"
[ -z "$PYTHON" ] || fold
replay=$(rate_in '^replay \\(median' <<< "$out")
decoder=$(rate_in '^JSONDecoder' <<< "$out")
goal ratio "replay / JSONDecoder" "$replay" "$decoder" events/s 5
# What following the hash chain at start-up costs (BENCHMARKS.md): said, not a goal.
indexed=$(rate_in '^replay with the line index \\(median' <<< "$out")
chained=$(rate_in '^replay with the line index and the hash chain' <<< "$out")
awk -v i="$indexed" -v c="$chained" -v d="$decoder" \
  'BEGIN { printf "start-up replay: %.0f events/s with the hash chain followed, %.0f without (%.2fx the time); %.1fx JSONDecoder\n", c, i, i / c, c / d }'
if [ -n "$PYTHON" ]; then
  python_rate=$(awk '{ for (i = 1; i <= NF; i++) sum += $i; printf "%.0f", sum / NF }' <<< "$FOLDS")
  awk -v r="$replay" -v p="$python_rate" -v d="$decoder" \
    'BEGIN { printf "replay %.0f events/s: %.1fx JSONDecoder (goal: 5), %.1fx the Python orjson fold at %.0f events/s, mean of 2 (goal: 3)\n", r, r / d, r / p, p }'
  goal ratio "replay / Python orjson fold" "$replay" "$python_rate" events/s 3
else
  goal skip "replay / Python orjson fold" "no python3 with orjson"
fi

# A part that fails is reported, and the others still run: the table says what was measured.
FAILED=
section "Durable appends (the store alone)"
"$BENCH_BIN" append --dir "$BENCH_DIR/append" --seconds "${BENCH_APPEND_SECONDS:-3}" || FAILED+=" appends"

section "HTTP"
scripts/http-bench.sh || FAILED+=" HTTP"

section "PostgreSQL log (issue 15)"
scripts/pg-log-bench.sh || FAILED+=" PostgreSQL log"

section "Several nodes on one PostgreSQL table (issues 15 and 38)"
scripts/nodes-bench.sh || FAILED+=" several nodes"

section "Search (issue 35)"
# The index over the live announcements of the bench log, built as a server builds it (two halves
# side by side), its memory against the live text, and two-word queries (the last word a prefix).
search_out=$("$BENCH_BIN" search "$LOG") || FAILED+=" search"
echo "$search_out"
# The goals are held on the vocabulary of 100,000 words (the generated log's 22 make sets that are
# all bitmaps, and memory a few megabytes); the generated log's figures are printed above them.
search_median=$(awk '/two-word queries/ { for (i = 1; i <= NF; i++) if ($i == "median") m = $(i + 1) } END { print m }' <<< "$search_out")
search_memory=$(awk '/memory \/ live text:/ { m = $NF } END { print m }' <<< "$search_out")
if [ -n "$search_median" ] && [ -n "$search_memory" ]; then
  goal most "search: two-word query, median in the server" "$search_median" ms 5
  goal most "search index memory / live text" "$search_memory" x 0.5
fi

section "Start-up"
# The store's open, from the whole log and from its snapshot, alternately (writes the snapshot
# beside the log first when there is none); then the real server to `listening`.
"$BENCH_BIN" startup "$LOG" || FAILED+=" start-up (store)"
LIVE_TEXT_MB=$LIVE_TEXT_MB scripts/startup-bench.sh "$LOG" || FAILED+=" start-up"

section "Goals (issue 14)"
"$BENCH_BIN" goals "$BENCH_GOALS"
if [ -n "$FAILED" ]; then echo "failed:$FAILED (see above)"; exit 1; fi
