#!/usr/bin/env bash
# HTTP figures for `make bench`, each beside the anchor its goal (issue 14) is measured against,
# in alternating runs (A B … then … B A) so that the machine's drift falls on both sides:
#
#   GET /health, GET /announcements v2 (10 items), GET /announcements/2
#       against a bare Hummingbird server (`AnnouncementsBench bare`: one route, no middleware)
#   GET /announcements/2           against the same server with `metrics: {enabled: false}` (the
#                                  cost of counting and timing each request: issue 17, ≤ 5%)
#   durable POST, 1 connection     against the disk's own write + fdatasync of one line
#                                  (`AnnouncementsBench fsync`) and PostgreSQL
#   durable POSTs, 16 and 64 conn. against PostgreSQL (pgbench, the same JSON, scripts/pg-bench.sh),
#                                  and at 64 against the store's own append benchmark (64 writers)
#   durable POSTs, 1, 16, 64 conn. also against the bare server's POST that echoes the same body
#                                  (not a goal: the framework's own cost of such a POST)
#
# then durable POSTs while 100 clients follow the Server-Sent Events stream. wrk runs with one
# thread (-t1), 64 connections for reads, on 127.0.0.1; the servers are release builds, each a
# process of its own, with LOG_LEVEL=warning (no access-log line per request). Every POST sends
# scripts/bench-post.json (1.1 KB). The goals go to $BENCH_GOALS for the final table.
#
# Environment (all optional):
#   BENCH_DIR             temporary folders go here: the disk the bench log is on (default .bench)
#   BENCH_GOALS           file the goals are appended to (default: none)
#   HTTP_BENCH_SECONDS    seconds of each wrk, pgbench, fsync or append run (default 5)
#   HTTP_BENCH_ROUNDS     rounds of each alternation, every other one in reverse (default 2)
#   HTTP_BENCH_PG         0: leave PostgreSQL out (default 1)
#   HTTP_BENCH_FOLLOWERS  SSE followers in the last part (default 100; 0 leaves that part out)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/pg-bench.sh

BIN=.build/release/announcements
BENCH_BIN=.build/release/AnnouncementsBench
BENCH_DIR=${BENCH_DIR:-.bench}
SECONDS_EACH=${HTTP_BENCH_SECONDS:-5}
ROUNDS=${HTTP_BENCH_ROUNDS:-2}
FOLLOWERS=${HTTP_BENCH_FOLLOWERS:-100}

# goal KIND NAME FIGURES…: one line of the goals file (GoalFile.swift), when there is one.
goal() {
  if [ -n "${BENCH_GOALS:-}" ]; then (IFS=$'\t'; echo "$*") >> "$BENCH_GOALS"; fi
}

skip_all() { # REASON: every goal of this script, skipped
  for name in "GET /health / bare Hummingbird" "GET /announcements v2 / bare" "GET /announcements/2 / bare" \
      "POST, 1 connection / one-line fdatasync" "POST, 1 connection / PostgreSQL" "POST, 16 connections / PostgreSQL" \
      "POST, 64 connections / PostgreSQL" "POST, 64 connections / store append, 64 writers" \
      "GET /announcements/2 with metrics / without"; do
    goal skip "$name" "$1"
  done
  echo "HTTP figures skipped: $1"
  exit 0
}

for tool in "$BIN" "$BENCH_BIN"; do [ -x "$tool" ] || { echo "$tool is missing: run 'make release' first"; exit 1; }; done
command -v curl >/dev/null || skip_all "curl is missing (apt-get install curl)"
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "wrk is missing: installing it…"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; } || skip_all "wrk is missing and 'apt-get install wrk' failed"
  else
    skip_all "wrk is missing (apt-get install wrk, as root)"
  fi
fi

mkdir -p "$BENCH_DIR"
DIR=$(mktemp -d "$(cd "$BENCH_DIR" && pwd)/http-XXXXXX")
SERVER= BARE= PLAIN=  # set before the trap: under `set -u` an unset one would stop the trap before its `rm`
stop_all() {
  for pid in $SERVER $BARE $PLAIN; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pg_stop
  rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap stops the servers on Ctrl-C too

# listening OUT PID: waits (10 s at most) for the `listening on URL` line in OUT; prints the URL.
listening() {
  local url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$1")
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:" >&2; cat "${1%.out}.err" >&2; return 1
}

# The shipped seed, a writer token, and a fresh log in the temporary folder.
sed -e 's|^port: .*|port: 0|' -e 's|^log: .*|log: log.jsonl|' -e 's|editor: env:ANNOUNCEMENTS_TOKEN|bench: bench-token|' config.yaml > "$DIR/config.yaml"
# Without the token every POST below would be a 401, measured as if it were a write.
grep -q 'bench: bench-token' "$DIR/config.yaml" || {
  echo "config.yaml has no 'editor: env:ANNOUNCEMENTS_TOKEN' line for the bench token to replace; update scripts/http-bench.sh"
  exit 1
}
LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml" > "$DIR/server.out" 2> "$DIR/server.err" &
SERVER=$!
LOG_LEVEL=warning "$BENCH_BIN" bare > "$DIR/bare.out" 2> "$DIR/bare.err" &
BARE=$!
# The same server without metrics, on a log of its own.
mkdir -p "$DIR/plain"
{ sed -e 's|^log: .*|log: log.jsonl|' "$DIR/config.yaml"; printf 'metrics:\n  enabled: false\n'; } > "$DIR/plain/config.yaml"
LOG_LEVEL=warning "$BIN" serve --config "$DIR/plain/config.yaml" > "$DIR/plain.out" 2> "$DIR/plain.err" &
PLAIN=$!
URL=$(listening "$DIR/server.out" "$SERVER")
BARE_URL=$(listening "$DIR/bare.out" "$BARE")
PLAIN_URL=$(listening "$DIR/plain.out" "$PLAIN")

export BENCH_POST_BODY=$PWD/scripts/bench-post.json

# The list holds 10 items, as the issue measured it: the seed's 6 and 4 POSTs. /health then
# answers the same bytes as the bare server's (seq 10).
for _ in 1 2 3 4; do
  curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
    --data-binary "@$BENCH_POST_BODY" "$URL/announcements" || { echo "a POST to $URL/announcements failed"; exit 1; }
done
items=$(curl -sf -H 'Accept-Version: 2.0' "$URL/announcements" -D - -o /dev/null | tr -d '\r' | awk -F': ' 'tolower($1) == "x-total-count" { print $2 }')
[ "$items" = 10 ] || { echo "GET /announcements lists ${items:-no} items instead of 10; the seed in config.yaml changed?"; exit 1; }

# wrk_rate CONNECTIONS [wrk options…] URL: requests per second; fails on non-2xx answers.
wrk_rate() {
  local connections=$1 out; shift
  out=$(wrk -t1 -c"$connections" -d"${SECONDS_EACH}s" "$@")
  if grep -q 'Non-2xx' <<< "$out"; then
    echo "wrk got errors from ${*: -1}, which would be measured as if they were answers:" >&2; echo "$out" >&2; return 1
  fi
  awk '/Requests\/sec/ { print $2 }' <<< "$out"
}

# The figure of one run of NAME (per second).
measure() {
  case $1 in
    bare) wrk_rate 64 "$BARE_URL/health" ;;
    health) wrk_rate 64 "$URL/health" ;;
    v2) wrk_rate 64 -H 'Accept-Version: 2.0' "$URL/announcements" ;;
    one) wrk_rate 64 "$URL/announcements/2" ;;
    metered) wrk_rate 64 "$URL/announcements/2" ;;
    plain) wrk_rate 64 "$PLAIN_URL/announcements/2" ;;
    post*) wrk_rate "${1#post}" -s scripts/bench-post.lua "$URL/announcements" ;;
    echo*) wrk_rate "${1#echo}" -s scripts/bench-post.lua "$BARE_URL/announcements" ;;
    pg*) pg_rate "${1#pg}" "$SECONDS_EACH" ;;
    fsync) "$BENCH_BIN" fsync --dir "$DIR/fsync" --seconds "$SECONDS_EACH" \
             | awk '{ for (i = 2; i <= NF; i++) if ($i == "syncs/s,") print $(i - 1) }' ;;
    append64) "$BENCH_BIN" append --dir "$DIR/append" --writers 64 --followers 0 --seconds "$SECONDS_EACH" \
             | awk '/writers:/ { print $3; exit }' ;;
  esac
}

label() {
  case $1 in
    bare) echo "bare Hummingbird GET /health" ;;
    health) echo "GET /health" ;;
    v2) echo "GET /announcements v2 (10 items)" ;;
    one) echo "GET /announcements/2" ;;
    metered) echo "GET /announcements/2, metrics on" ;;
    plain) echo "GET /announcements/2, metrics off" ;;
    post*) echo "POST /announcements, ${1#post} conn." ;;
    echo*) echo "bare Hummingbird POST echo, ${1#echo} conn." ;;
    pg*) echo "PostgreSQL pgbench, ${1#pg} conn." ;;
    fsync) echo "write + fdatasync of one line" ;;
    append64) echo "store append, 64 writers" ;;
  esac
}

declare -A RUNS
# alternate NAME…: HTTP_BENCH_ROUNDS rounds of these runs, every other round in reverse order.
alternate() {
  local round name value order
  for ((round = 0; round < ROUNDS; round++)); do
    order=("$@")
    if ((round % 2 == 1)); then order=(); for name in "$@"; do order=("$name" "${order[@]}"); done; fi
    for name in "${order[@]}"; do
      value=$(measure "$name")
      [ -n "$value" ] || { echo "no figure from the run of '$(label "$name")'" >&2; exit 1; }
      RUNS[$name]+="$value "
      printf "  %-36s %10.0f/s\n" "$(label "$name")" "$value"
    done
  done
}

mean() { awk '{ for (i = 1; i <= NF; i++) sum += $i; printf "%.0f", sum / NF }' <<< "${RUNS[$1]}"; }

# relate NAME ANCHOR [NOTE]: prints the means and their ratio.
relate() {
  awk -v a="$(label "$1")" -v b="$(label "$2")" -v m="$(mean "$1")" -v n="$(mean "$2")" -v r="$ROUNDS" -v note="${3:-}" \
    'BEGIN { printf "%s: %.0f/s, %s: %.0f/s (means of %d): %.2f%s\n", a, m, b, n, r, m / n, note }'
}

# compare NAME ANCHOR TARGET GOAL: prints the means and their ratio, and records the goal.
compare() {
  relate "$1" "$2" " (goal: $3)"
  goal ratio "$4" "$(mean "$1")" "$(mean "$2")" "/s" "$3"
}

echo "Per-request cost (wrk -t1 -c64, ${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate bare health v2 one
compare health bare 0.85 "GET /health / bare Hummingbird"
compare v2 bare 0.8 "GET /announcements v2 / bare"
compare one bare 0.8 "GET /announcements/2 / bare"
echo
echo "The cost of metrics (the same request, metrics on and off, ${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate metered plain
compare metered plain 0.95 "GET /announcements/2 with metrics / without"

PG=
if [ "${HTTP_BENCH_PG:-1}" = 0 ]; then PG_SKIP="HTTP_BENCH_PG=0"
elif pg_bench_start; then PG=1
fi
[ -n "$PG" ] || echo "PostgreSQL comparison skipped: $PG_SKIP"

echo
echo "One writer (${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate post1 fsync ${PG:+pg1} echo1
compare post1 fsync 0.8 "POST, 1 connection / one-line fdatasync"

echo
echo "Many writers (${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate post16 ${PG:+pg16} echo16
alternate post64 ${PG:+pg64} append64 echo64
if [ -n "$PG" ]; then
  for n in 1 16 64; do compare "post$n" "pg$n" 2 "POST, $n connection$([ "$n" = 1 ] || echo s) / PostgreSQL"; done
else
  for n in 1 16 64; do goal skip "POST, $n connection$([ "$n" = 1 ] || echo s) / PostgreSQL" "$PG_SKIP"; done
fi
compare post64 append64 0.5 "POST, 64 connections / store append, 64 writers"
# Not goals: how much of a durable POST is the framework's own cost for a POST of that size (the
# bare server echoing the body: no store, no disk), and where PostgreSQL stands against that.
echo
echo "The framework's own POST (bare Hummingbird echoing the same body; not goals):"
for n in 1 16 64; do
  relate "post$n" "echo$n"
  if [ -n "$PG" ]; then relate "echo$n" "pg$n"; fi
done
pg_stop

# Durable POSTs with followers of the event stream (curl, reading as fast as it can), between two
# runs without them, so that the machine's drift falls on both sides alike.
[ "$FOLLOWERS" -gt 0 ] || exit 0
echo
seq_now() { curl -s "$URL/health" | sed 's/.*"seq":\([0-9]*\).*/\1/'; }
size() { wc -c < "$DIR/log.jsonl"; }
alone_before=$(measure post64)
after=$(seq_now)
for _ in $(seq "$FOLLOWERS"); do
  nice -n 19 curl -sN -o /dev/null --max-time $((SECONDS_EACH + 3)) -w '%{size_download}\n' \
    -H 'Accept: text/event-stream' "$URL/events?after=$after" >> "$DIR/followers" &
done
sleep 1
start_bytes=$(size)
followed=$(measure post64)
end_bytes=$(size)
wait $(jobs -p | grep -v -e "^$SERVER\$" -e "^$BARE\$" -e "^$PLAIN\$") 2>/dev/null || true
# A stream notices that its client left when it next sends: one more event ends them all.
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
  -d '{"title":"Followers gone"}' "$URL/announcements"
sleep 2
alone_after=$(measure post64)
awk -v followed="$followed" -v a="$alone_before" -v b="$alone_after" -v n="$FOLLOWERS" \
    -v appended=$((end_bytes - start_bytes)) -v got="$(awk '{ s += $1 } END { print s / NR }' "$DIR/followers")" 'BEGIN {
  printf "POST /announcements, 64 conn., %d SSE followers: %.0f/s, %.2f of the rate without\n", n, followed, followed / ((a + b) / 2)
  printf "  (of the %.0f and %.0f POSTs/s without followers just before and after; each follower\n", a, b
  printf "   received %.0f MB of events while %.0f MB were appended)\n", got / 1e6, appended / 1e6
}'
