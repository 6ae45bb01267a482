#!/usr/bin/env bash
# `make bench-cores`: issue 37's goals 1-3 with the server pinned (taskset) to 2, 4 and 8 cores and
# wrk on others, on a machine with at least 12 cores; on a smaller one it says so and stops (the
# figures of 2 cores sharing with wrk say nothing of scaling). ../shared/bench/cores/ packs the
# binaries for a machine without Swift.
#
# At each core count, one run each of DUR seconds, side by side with the anchors:
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
#   CORES_BENCH_WRK     wrk's cores, a taskset list (default 8-15, or 8 to the last core)
#   DUR                 seconds per run (default 5); BENCH_DIR temporary folders (default .bench)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

BIN=.build/release/announcements
BENCH_BIN=.build/release/AnnouncementsBench
DUR=${DUR:-5}
CORES=$(nproc)
if [ -z "${CORES_BENCH_SETS:-}" ] && [ "$CORES" -lt 12 ]; then
  echo "make bench-cores needs at least 12 cores (the server on 2, 4 and 8, wrk on 4 others); this machine has $CORES: not run."
  echo "On a bigger machine run it there, or pack the binaries with ../shared/bench/cores/prepare.sh (its README says how)."
  [ "${1:-}" = --can-run ] && exit 1
  exit 0
fi
[ "${1:-}" = --can-run ] && exit 0
SETS=${CORES_BENCH_SETS:-2 4 8}
LAST=$((CORES - 1))
WRK_CORES=${CORES_BENCH_WRK:-8-$((LAST < 15 ? LAST : 15))}
for tool in "$BIN" "$BENCH_BIN"; do [ -x "$tool" ] || { echo "$tool is missing: run 'swift build -c release' first"; exit 1; }; done
for tool in wrk taskset; do command -v "$tool" > /dev/null || { echo "$tool is missing (apt-get install ${tool/taskset/util-linux})"; exit 1; }; done
[ -n "${CORES_BENCH_SETS:-}" ] && echo "CORES_BENCH_SETS=$SETS: figures for checking the script, not the goals' (those need the server on 2, 4 and 8 cores of its own)"
echo "$CORES cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); wrk on $WRK_CORES; $DUR s per run"

mkdir -p "${BENCH_DIR:-.bench}"
DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/cores-XXXXXX")
SERVER= URL=
stop_server() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2> /dev/null || true; wait "$SERVER" 2> /dev/null || true; fi
  SERVER=
}
trap 'stop_server; rm -rf "$DIR"' EXIT
trap 'exit 130' INT TERM
export BENCH_POST_BODY=$PWD/scripts/bench-post.json

# rate CONNECTIONS URL [wrk options…]: requests a second (wrk pinned to WRK_CORES); fails on any
# non-2xx answer or socket error.
rate() {
  local connections=$1 url=$2
  shift 2
  local threads=$((connections < 4 ? connections : 4)) out
  out=$(taskset -c "$WRK_CORES" wrk -t"$threads" -c"$connections" -d"${DUR}s" "$@" "$url")
  if grep -qE 'Non-2xx|Socket errors' <<< "$out"; then echo "wrk got errors from $url:" >&2; echo "$out" >&2; return 1; fi
  awk '/^Requests\/sec/ { printf "%d", $2 }' <<< "$out"
}

# start SERVER_CORES NAME COMMAND…: starts a server pinned to SERVER_CORES (its pid in SERVER, its
# URL in URL).
start() {
  local cores=$1 name=$2
  shift 2
  taskset -c "$cores" "$@" > "$DIR/$name.out" 2> "$DIR/$name.err" &
  SERVER=$!
  URL=$(listening "$DIR/$name.out" "$SERVER")
}

# verdict FIGURE GOAL: "met" or "NOT met" for FIGURE >= GOAL (decimals).
verdict() { awk -v f="$1" -v g="$2" 'BEGIN { print (f >= g ? "met" : "NOT met") }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
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
  fsync=$(taskset -c "$cores" "$BENCH_BIN" fsync --dir "$DIR/fsync" --seconds "$DUR" | sed -n 's/.*: \([0-9]*\) syncs\/s.*/\1/p')
  appends=$(taskset -c "$cores" "$BENCH_BIN" append --dir "$DIR/append" --writers 64 256 --seconds "$DUR" --followers 0)
  store64=$(awk '/^ *64 writers:/ { print $3 }' <<< "$appends"); store256=$(awk '/^ *256 writers:/ { print $3 }' <<< "$appends")
  rm -rf "$DIR/fsync" "$DIR/append"
  # Ours, on a fresh log: 10 announcements (the seed and four POSTs).
  rm -f "$DIR"/log.jsonl*
  start "$cores" server env LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml"
  for _ in 1 2 3 4; do
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
      --data-binary "@$BENCH_POST_BODY" "$URL/announcements" || { echo "a POST to $URL/announcements failed"; exit 1; }
  done
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
