#!/usr/bin/env bash
# HTTP figures for `make bench`, each beside the anchor its goal (issue 14) is measured against,
# in alternating runs (A B … then … B A) so that the machine's drift falls on both sides:
#
#   GET /health, GET /announcements v2 (10 items), GET /announcements/2
#       against a bare Hummingbird server (`AnnouncementsBench bare`: one route, no middleware)
#   GET /announcements/2           against the same server with `metrics: {enabled: false}` (the
#                                  cost of counting and timing each request: issue 17, ≤ 5%)
#   durable POST, 1 connection     against its limit (issue 37, goal 2): one round trip of the
#                                  bare server's POST echoing the same body, then one write +
#                                  fdatasync of one line (`AnnouncementsBench fsync`), each
#                                  measured alone in the same rounds: 1 / (1/echo + 1/fsync)
#   durable POSTs, 16 and 64 conn. against the bare server's echo of the same body (goal 3, in its
#                                  2-core form), and at 64 against the store's own append
#                                  benchmark (64 writers)
#   against the stacks a team would build instead (issue 37, goal 4), on a throwaway PostgreSQL
#   (fsync and synchronous_commit on; scripts/pg-bench.sh), each with the same 10 announcements:
#     (a) Hummingbird + postgres-nio's pool (scripts/peers/hummingbird-postgres, a release build)
#     (b) FastAPI + asyncpg under uvicorn, uvloop, httptools, 2 workers (scripts/peers/fastapi;
#         its packages go into .build/python-tools)
#   durable POSTs at 1, 16 and 64 connections, the list (10) and one announcement at 64, each
#   held against the faster of the two in the same rounds
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
#   HTTP_BENCH_ROUNDS     rounds of each alternation, every other one in reverse (default 4: with
#                         2, the reads' ratios swung by 10% from run to run)
#   HTTP_BENCH_PG         0: leave PostgreSQL and the peers out (default 1)
#   HTTP_BENCH_FOLLOWERS  SSE followers in the last part (default 100; 0 leaves that part out)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh
source scripts/pg-bench.sh

BIN=.build/release/announcements
BENCH_BIN=.build/release/AnnouncementsBench
BENCH_DIR=${BENCH_DIR:-.bench}
SECONDS_EACH=${HTTP_BENCH_SECONDS:-5}
ROUNDS=${HTTP_BENCH_ROUNDS:-4}
FOLLOWERS=${HTTP_BENCH_FOLLOWERS:-100}

# goal KIND NAME FIGURES…: one line of the goals file (GoalFile.swift), when there is one.
goal() {
  if [ -n "${BENCH_GOALS:-}" ]; then (IFS=$'\t'; echo "$*") >> "$BENCH_GOALS"; fi
}

# The goals that hold our server against the peers (skipped together when they cannot run).
PEER_GOALS=("POST, 1 connection / the faster peer" "GET /announcements v2 / the faster peer" "GET /announcements/2 / the faster peer")

skip_all() { # REASON: every goal of this script, skipped
  for name in "GET /health / bare Hummingbird" "GET /announcements v2 / bare" "GET /announcements/2 / bare" \
      "POST, 1 connection / its limit (echo + one-line fdatasync)" "POST, 16 connections / bare echo" \
      "POST, 64 connections / bare echo" "POST, 64 connections / store append, 64 writers" \
      "GET /announcements/2 with metrics / without" "${PEER_GOALS[@]}"; do
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
SERVER= BARE= PLAIN= PEER_HB= PEER_PY=  # set before the trap: under `set -u` an unset one would stop the trap before its `rm`
stop_all() {
  for pid in $SERVER $BARE $PLAIN $PEER_HB $PEER_PY; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  pg_stop
  rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap stops the servers on Ctrl-C too


# The shipped seed, a writer token, and a fresh log in the temporary folder.
bench_start_both "$DIR" "$BIN" "$BENCH_BIN"
# The same server without metrics, on a log of its own.
mkdir -p "$DIR/plain"
{ sed -e 's|^log: .*|log: log.jsonl|' "$DIR/config.yaml"; printf 'metrics:\n  enabled: false\n'; } > "$DIR/plain/config.yaml"
LOG_LEVEL=warning "$BIN" serve --config "$DIR/plain/config.yaml" > "$DIR/plain.out" 2> "$DIR/plain.err" &
PLAIN=$!
PLAIN_URL=$(listening "$DIR/plain.out" "$PLAIN")

export BENCH_POST_BODY=$PWD/scripts/bench-post.json

# The list holds 10 items, as the issue measured it: the seed's 6 and 4 POSTs. /health then
# answers the same bytes as the bare server's (seq 10).
bench_seed "$URL"

# rate CONNECTIONS [wrk options…] URL: requests a second (wrk_rate, one thread, SECONDS_EACH).
rate() {
  local connections=$1
  shift
  wrk_rate -t1 -c"$connections" -d"${SECONDS_EACH}s" "$@"
}

# The figure of one run of NAME (per second).
measure() {
  case $1 in
    bare) rate 64 "$BARE_URL/health" ;;
    health) rate 64 "$URL/health" ;;
    v2 | v2peer) rate 64 -H 'Accept-Version: 2.0' "$URL/announcements" ;;
    one | onepeer) rate 64 "$URL/announcements/2" ;;
    metered) rate 64 "$URL/announcements/2" ;;
    plain) rate 64 "$PLAIN_URL/announcements/2" ;;
    post*) rate "${1#post}" -s scripts/bench-post.lua "$URL/announcements" ;;
    echo*) rate "${1#echo}" -s scripts/bench-post.lua "$BARE_URL/announcements" ;;
    hblist) rate 64 "$PEER_HB_URL/announcements" ;;
    pylist) rate 64 "$PEER_PY_URL/announcements" ;;
    hbone) rate 64 "$PEER_HB_URL/announcements/2" ;;
    pyone) rate 64 "$PEER_PY_URL/announcements/2" ;;
    hb*) rate "${1#hb}" -s scripts/bench-post.lua "$PEER_HB_URL/announcements" ;;
    py*) rate "${1#py}" -s scripts/bench-post.lua "$PEER_PY_URL/announcements" ;;
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
    v2 | v2peer) echo "GET /announcements v2 (10 items)" ;;
    one | onepeer) echo "GET /announcements/2" ;;
    metered) echo "GET /announcements/2, metrics on" ;;
    plain) echo "GET /announcements/2, metrics off" ;;
    post*) echo "POST /announcements, ${1#post} conn." ;;
    echo*) echo "bare Hummingbird POST echo, ${1#echo} conn." ;;
    hblist) echo "peer HB + postgres-nio, GET list (10)" ;;
    pylist) echo "peer FastAPI + asyncpg, GET list (10)" ;;
    hbone) echo "peer HB + postgres-nio, GET one" ;;
    pyone) echo "peer FastAPI + asyncpg, GET one" ;;
    hb*) echo "peer HB + postgres-nio, POST, ${1#hb} conn." ;;
    py*) echo "peer FastAPI + asyncpg, POST, ${1#py} conn." ;;
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

# The peers (goal 4): on a throwaway PostgreSQL, each with a table of its own holding the same 10
# announcements (the benchmark's POST body), then started and asked once each route answers.
PEERS= PEER_SKIP=
start_peers() {
  if [ "${HTTP_BENCH_PG:-1}" = 0 ]; then PEER_SKIP="HTTP_BENCH_PG=0"; return 1; fi
  [ -x .build/release/PeerHummingbirdPostgres ] || { PEER_SKIP=".build/release/PeerHummingbirdPostgres is missing: run 'swift build -c release' first"; return 1; }
  source scripts/python-tools.sh
  python_tools fastapi uvicorn uvloop httptools asyncpg > /dev/null || { PEER_SKIP=$PYTHON_TOOLS_SKIP; return 1; }
  pg_bench_start || { PEER_SKIP=$PG_SKIP; return 1; }
  local table title body
  field() { "$PYTHON_TOOLS/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$BENCH_POST_BODY" "$1" | sed "s/'/''/g"; }
  title=$(field title) body=$(field body)
  [ -n "$title" ] && [ -n "$body" ] || { PEER_SKIP="cannot read the title and body of $BENCH_POST_BODY"; return 1; }
  for table in peer_hb peer_py; do
    "$PG_BIN/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres > /dev/null <<SQL || { PEER_SKIP="creating the peers' tables failed"; return 1; }
CREATE TABLE $table (id bigserial PRIMARY KEY, title text NOT NULL, body text);
INSERT INTO $table (title, body) SELECT '$title', '$body' FROM generate_series(1, 10);
SQL
  done
  PEER_PG_PORT=$PG_PORT PEER_TABLE=peer_hb .build/release/PeerHummingbirdPostgres > "$DIR/peer-hb.out" 2> "$DIR/peer-hb.err" &
  PEER_HB=$!
  # uvicorn's workers share a socket it binds before they start: a free port, asked for first.
  local port
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PEER_PG_DSN="postgres://postgres@127.0.0.1:$PG_PORT/postgres" PEER_TABLE=peer_py \
    "$PYTHON_TOOLS/bin/uvicorn" app:app --app-dir scripts/peers/fastapi --workers 2 --loop uvloop --http httptools \
      --host 127.0.0.1 --port "$port" --log-level warning --no-access-log > "$DIR/peer-py.out" 2> "$DIR/peer-py.err" &
  PEER_PY=$!
  PEER_HB_URL=$(listening "$DIR/peer-hb.out" "$PEER_HB") || { PEER_SKIP="the Hummingbird peer did not start"; return 1; }
  PEER_PY_URL=http://127.0.0.1:$port
  local url path
  for url in "$PEER_HB_URL" "$PEER_PY_URL"; do
    for _ in $(seq 100); do curl -sf -o /dev/null "$url/announcements" && break; sleep 0.1; done
    for path in announcements announcements/2; do
      curl -sf -o /dev/null "$url/$path" || { PEER_SKIP="GET $url/$path failed; the peers' stderr: $(tail -n 3 "$DIR"/peer-*.err)"; return 1; }
    done
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
      --data-binary "@$BENCH_POST_BODY" "$url/announcements" || { PEER_SKIP="POST $url/announcements failed; the peers' stderr: $(tail -n 3 "$DIR"/peer-*.err)"; return 1; }
  done
}
# stop_peers: the peers and their PostgreSQL, if started (a failed start may have left some running).
stop_peers() {
  local pid
  for pid in $PEER_HB $PEER_PY; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  PEER_HB= PEER_PY=
  pg_stop
}
if start_peers; then PEERS=1; else stop_peers; echo "The peers are left out: $PEER_SKIP"; fi

# limit: 1 / (1/echo + 1/fsync) of the means: one bare round trip, then one sync of one line.
limit() { awk -v e="$(mean echo1)" -v f="$(mean fsync)" 'BEGIN { printf "%.0f", 1 / (1 / e + 1 / f) }'; }

echo
echo "One writer (${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate post1 fsync echo1 ${PEERS:+hb1 py1}
relate post1 fsync
awk -v m="$(mean post1)" -v l="$(limit)" -v e="$(mean echo1)" -v f="$(mean fsync)" 'BEGIN {
  printf "POST /announcements, 1 conn.: %.0f/s, its limit 1 / (1/%.0f + 1/%.0f) = %.0f/s: %.2f (goal: 0.8)\n", m, e, f, l, m / l }'
goal ratio "POST, 1 connection / its limit (echo + one-line fdatasync)" "$(mean post1)" "$(limit)" "/s" 0.8

echo
echo "Many writers (${SECONDS_EACH}s per run, $ROUNDS rounds):"
alternate post16 echo16 ${PEERS:+hb16 py16}
alternate post64 append64 echo64 ${PEERS:+hb64 py64}
compare post16 echo16 0.5 "POST, 16 connections / bare echo"
compare post64 echo64 0.5 "POST, 64 connections / bare echo"
compare post64 append64 0.5 "POST, 64 connections / store append, 64 writers"

# against_peers OURS HB PY TARGET GOAL: ours against the faster peer's mean; with a GOAL, recorded.
against_peers() {
  local hb py faster
  hb=$(mean "$2") py=$(mean "$3")
  faster=$(awk -v a="$hb" -v b="$py" 'BEGIN { print (a > b ? a : b) }')
  awk -v a="$(label "$1")" -v m="$(mean "$1")" -v hb="$hb" -v py="$py" -v f="$faster" -v t="${4:-}" 'BEGIN {
    printf "%s: %.0f/s; HB + postgres-nio %.0f/s, FastAPI + asyncpg %.0f/s: %.2f of the faster%s\n", a, m, hb, py, m / f, (t == "" ? "" : " (goal: " t ")") }'
  [ -z "${5:-}" ] || goal ratio "$5" "$(mean "$1")" "$faster" "/s" "$4"
}

echo
if [ -n "$PEERS" ]; then
  echo "Reads against the peers (wrk -t1 -c64, ${SECONDS_EACH}s per run, $ROUNDS rounds):"
  alternate v2peer hblist pylist onepeer hbone pyone
  echo
  echo "Against the stacks a team would build instead (durable POSTs from the rounds above):"
  against_peers post1 hb1 py1 1.5 "${PEER_GOALS[0]}"
  against_peers post16 hb16 py16
  against_peers post64 hb64 py64
  against_peers v2peer hblist pylist 5 "${PEER_GOALS[1]}"
  against_peers onepeer hbone pyone 5 "${PEER_GOALS[2]}"
else
  for name in "${PEER_GOALS[@]}"; do goal skip "$name" "$PEER_SKIP"; done
fi
# Not goals: how much of a durable POST is the framework's own cost for a POST of that size (the
# bare server echoing the body: no store, no disk).
echo
echo "The framework's own POST (bare Hummingbird echoing the same body; not goals):"
for n in 1 16 64; do relate "post$n" "echo$n"; done
stop_peers

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
