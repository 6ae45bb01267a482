#!/usr/bin/env bash
# `make bench-cores`: issue 37's goals 1-3 with the server pinned (taskset) to 2, 4 and 8 cores and
# wrk on others, on a machine with at least 12 cores; on a smaller one it says so and stops (the
# figures of 2 cores sharing with wrk say nothing of scaling). ../shared/bench/cores/ packs the
# binaries for a machine without Swift.
#
# At each core count, one run each of CORES_BENCH_SECONDS, side by side with the anchors:
#   1. reads scale: GET /health, the v2 list (10 items) and one announcement at 64 and 256
#      connections, each against the bare Hummingbird app's GET /health (`AnnouncementsBench
#      bare`): /health >= 0.85, the list and one >= 0.8; no route slower at 256 than at 64 by more
#      than the bare app is
#   2. one writer near the limit: a durable POST on one connection >= 0.8 of
#      1 / (bare POST echo on one connection + one write and fdatasync of one line), both measured
#      at that core count; never slower with more cores
#   3. many writers scale: durable POSTs at 64 and 256 connections >= 0.5 of the bare echo at the
#      same connections, never lower at 256 than at 64; the store alone (`AnnouncementsBench
#      append`, on the server's cores) at 256 writers >= its rate at 64
# Every POST sends scripts/bench-post.json (1.1 KB) with the bench's token; the server serves the
# shipped config (seed included, 10 announcements after four POSTs) on a fresh log.
#
# Usage: scripts/cores-bench.sh   (after `swift build -c release`; needs wrk and taskset)
#        scripts/cores-bench.sh --can-run   only says whether it would run here (exit 1: it would not)
# Environment (all optional):
#   CORES_BENCH_SETS    the server's core counts (default "2 4 8"); set, it runs on any machine
#                       (a check that the script works: CORES_BENCH_SETS=1 CORES_BENCH_WRK=1 on 2
#                       cores), and says its figures are not the goals'
#   CORES_BENCH_WRK     wrk's cores, a taskset list (default: from the largest set's count to the
#                       last core, 8-15 at most)
#   CORES_BENCH_SECONDS seconds per run (default 5); BENCH_DIR temporary folders (default .bench)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

case ${1:-} in
  "" | --can-run) ;;
  *) echo "usage: $0 [--can-run]   (the environment variables its header names choose what it runs)"; exit 2 ;;
esac
BIN=.build/release/announcements
BENCH_BIN=.build/release/AnnouncementsBench
SECONDS_EACH=${CORES_BENCH_SECONDS:-5}
CORES=$(nproc)
# cannot_run REASON: says why it does not run here; `--can-run` then exits 1, a run exits 0.
cannot_run() {
  echo "$1: not run."
  [ "${ARGUMENT:-}" = --can-run ] && exit 1
  exit 0
}
ARGUMENT=${1:-}
if [ -z "${CORES_BENCH_SETS:-}" ] && [ "$CORES" -lt 12 ]; then
  cannot_run "make bench-cores needs at least 12 cores (the server on 2, 4 and 8, wrk on 4 others); this machine has $CORES.
On a bigger machine run it there, or pack the binaries with ../shared/bench/cores/prepare.sh (its README says how);
CORES_BENCH_SETS=1 CORES_BENCH_WRK=1 checks that the script runs on a small one"
fi
for tool in wrk taskset curl; do
  command -v "$tool" > /dev/null || cannot_run "$tool is missing (Debian: apt-get install ${tool/taskset/util-linux})"
done
[ "$ARGUMENT" = --can-run ] && exit 0
SETS=${CORES_BENCH_SETS:-2 4 8}
LARGEST=$(tr ' ' '\n' <<< "$SETS" | sort -n | tail -1)
LAST=$((CORES - 1))
WRK_CORES=${CORES_BENCH_WRK:-$LARGEST-$((LAST < 15 ? LAST : 15))}
[ -n "${CORES_BENCH_WRK:-}" ] || [ "$LARGEST" -le "$LAST" ] \
  || { echo "no core is left for wrk beside the server's $LARGEST: set CORES_BENCH_WRK (a taskset list)"; exit 1; }
for tool in "$BIN" "$BENCH_BIN"; do [ -x "$tool" ] || { echo "$tool is missing: run 'swift build -c release' first"; exit 1; }; done
[ -n "${CORES_BENCH_SETS:-}" ] && echo "CORES_BENCH_SETS=$SETS: figures for checking the script, not the goals' (those need the server on 2, 4 and 8 cores of its own)"
echo "$CORES cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); wrk on $WRK_CORES; $SECONDS_EACH s per run"

mkdir -p "${BENCH_DIR:-.bench}"
DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/cores-XXXXXX")
SERVER= URL=
stop_server() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2> /dev/null || true; wait "$SERVER" 2> /dev/null || true; fi
  SERVER=
}
finish() {
  local status=$?
  stop_server
  # A run that failed: what the servers said, before their folder goes.
  [ "$status" = 0 ] || tail -n 5 "$DIR"/*.err 2> /dev/null >&2 || true
  rm -rf "$DIR"
}
trap finish EXIT
trap 'exit 130' INT TERM
export BENCH_POST_BODY=$PWD/scripts/bench-post.json
export WRK_PIN=$WRK_CORES

# rate CONNECTIONS URL [wrk options…]: requests a second (wrk_rate, pinned to WRK_CORES, up to 4
# threads).
rate() {
  local connections=$1 url=$2
  shift 2
  wrk_rate -t"$((connections < 4 ? connections : 4))" -c"$connections" -d"${SECONDS_EACH}s" "$@" "$url"
}

# figure NAME VALUE: VALUE, when it is a number above 0; else stops, naming what gave none.
figure() {
  [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || { echo "no figure for $1 (got '${2}')" >&2; exit 1; }
  echo "$2"
}

# start SERVER_CORES NAME COMMAND…: starts a server pinned to SERVER_CORES (its pid in SERVER, its
# URL in URL).
start() {
  local pinned=$1 name=$2
  shift 2
  taskset -c "$pinned" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" &
  SERVER=$!
  URL=$(listening "$DIR/$name.out" "$SERVER")
}

# verdict FIGURE GOAL: "met" or "NOT met" for FIGURE >= GOAL (decimals).
verdict() { awk -v f="$1" -v g="$2" 'BEGIN { print (f >= g ? "met" : "NOT met") }'; }
# ratio A B: A / B (B, a measured anchor, is above 0: `figure` and wrk_rate see to it).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# line NAME FIGURE ANCHOR_NAME ANCHOR GOAL: one goal's line.
line() {
  local r
  r=$(ratio "$2" "$4")
  printf '  %-44s %7d/s  %-24s %7d/s  %s (goal %s: %s)\n' "$1" "$2" "$3" "$4" "$r" "$5" "$(verdict "$r" "$5")"
}

bench_config "$DIR/config.yaml"

PREVIOUS_ONE=
for n in $SETS; do
  cores=0-$((n - 1))
  echo
  echo "== the server on $n core(s) ($cores)"
  # The bare app: /health and the POST echo.
  start "$cores" bare env LOG_LEVEL=warning "$BENCH_BIN" bare
  bare64=$(rate 64 "$URL/health"); bare256=$(rate 256 "$URL/health")
  echo1=$(rate 1 "$URL/announcements" -s scripts/bench-post.lua)
  echo64=$(rate 64 "$URL/announcements" -s scripts/bench-post.lua)
  echo256=$(rate 256 "$URL/announcements" -s scripts/bench-post.lua)
  stop_server
  # The disk's own sync of one line, and the store alone, on the server's cores.
  mkdir -p "$DIR/fsync" "$DIR/append"
  synced=$(taskset -c "$cores" "$BENCH_BIN" fsync --dir "$DIR/fsync" --seconds "$SECONDS_EACH")
  fsync=$(figure "write + fdatasync of one line" "$(sed -n 's/.*: \([0-9]*\) syncs\/s.*/\1/p' <<< "$synced")")
  appends=$(taskset -c "$cores" "$BENCH_BIN" append --dir "$DIR/append" --writers 64 256 --seconds "$SECONDS_EACH" --followers 0)
  store64=$(figure "the store, 64 writers" "$(awk '/^ *64 writers:/ { print $3 }' <<< "$appends")")
  store256=$(figure "the store, 256 writers" "$(awk '/^ *256 writers:/ { print $3 }' <<< "$appends")")
  rm -rf "$DIR/fsync" "$DIR/append"
  # Ours, on a fresh log: 10 announcements (the seed and four POSTs).
  rm -f "$DIR"/log.jsonl*
  start "$cores" server env LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml"
  bench_seed "$URL"
  health64=$(rate 64 "$URL/health"); health256=$(rate 256 "$URL/health")
  list64=$(rate 64 "$URL/announcements" -H 'Accept-Version: 2.0'); list256=$(rate 256 "$URL/announcements" -H 'Accept-Version: 2.0')
  one64=$(rate 64 "$URL/announcements/2"); one256=$(rate 256 "$URL/announcements/2")
  post1=$(rate 1 "$URL/announcements" -s scripts/bench-post.lua)
  post64=$(rate 64 "$URL/announcements" -s scripts/bench-post.lua)
  post256=$(rate 256 "$URL/announcements" -s scripts/bench-post.lua)
  stop_server

  echo " 1. reads (against the bare app's GET /health)"
  line "GET /health, 64 conn." "$health64" "bare /health" "$bare64" 0.85
  line "GET /health, 256 conn." "$health256" "bare /health" "$bare256" 0.85
  line "GET /announcements v2 (10), 64 conn." "$list64" "bare /health" "$bare64" 0.8
  line "GET /announcements v2 (10), 256 conn." "$list256" "bare /health" "$bare256" 0.8
  line "GET /announcements/2, 64 conn." "$one64" "bare /health" "$bare64" 0.8
  line "GET /announcements/2, 256 conn." "$one256" "bare /health" "$bare256" 0.8
  bare_drop=$(ratio "$bare256" "$bare64")
  for route in "GET /health:$health64:$health256" "GET /announcements v2:$list64:$list256" "GET /announcements/2:$one64:$one256"; do
    IFS=: read -r name at64 at256 <<< "$route"
    drop=$(ratio "$at256" "$at64")
    printf '  %-44s 256/64 conn. %s, the bare app %s: %s\n' "$name" "$drop" "$bare_drop" "$(verdict "$drop" "$bare_drop")"
  done
  limit=$(awk -v e="$echo1" -v f="$fsync" 'BEGIN { printf "%d", (e > 0 && f > 0 ? 1 / (1 / e + 1 / f) : 0) }')
  echo " 2. one writer (the limit: 1 / (1/echo $echo1/s + 1/fdatasync $fsync/s))"
  line "POST, 1 conn." "$post1" "its limit" "$limit" 0.8
  if [ -n "$PREVIOUS_ONE" ]; then
    printf '  %-44s %7d/s, with fewer cores %d/s: %s\n' "never slower with more cores" "$post1" "$PREVIOUS_ONE" "$(verdict "$post1" "$PREVIOUS_ONE")"
  fi
  PREVIOUS_ONE=$post1
  echo " 3. many writers (against the bare POST echo)"
  line "POST, 64 conn." "$post64" "bare echo" "$echo64" 0.5
  line "POST, 256 conn." "$post256" "bare echo" "$echo256" 0.5
  printf '  %-44s %7d/s, at 64 %d/s: %s\n' "POST, 256 conn. not below 64" "$post256" "$post64" "$(verdict "$post256" "$post64")"
  printf '  %-44s %7d/s, at 64 %d/s: %s\n' "store alone, 256 writers not below 64" "$store256" "$store64" "$(verdict "$store256" "$store64")"
done
