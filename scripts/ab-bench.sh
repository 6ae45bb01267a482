#!/usr/bin/env bash
# Two builds of the server side by side: what a change bought, measured as BENCHMARKS.md asks
# (alternating rounds, A B then B A, so that the machine's drift falls on both sides). Each build
# serves a fresh log of the shipped config (with the bench's token) in a folder of its own; wrk
# (one thread) runs durable POSTs of scripts/bench-post.json at 1, 16 and 64 connections and
# GET /announcements/2 at 64 (and, when asked, the v2 list of 10, LIST, and /health, HEALTH),
# against one server at a time, while `perf stat` counts the server's CPU time and context
# switches (the hand-overs between its threads). Prints each workload's means (requests a second,
# and per request: µs of server CPU and switches) and the ratios B/A.
#
# Usage: scripts/ab-bench.sh A_BINARY B_BINARY   (release builds of `announcements`; needs wrk)
#   e.g. cp .build/release/announcements /tmp/before; (change, swift build -c release);
#        scripts/ab-bench.sh /tmp/before .build/release/announcements
# Environment: AB_ROUNDS (default 4), AB_SECONDS (each run, default 5), BENCH_DIR (default .bench),
# AB_WORKLOADS (which to run, comma-separated; default "POST 1,POST 16,POST 64,GET 64"; also
# "LIST 64", "HEALTH 64"),
# AB_POSTGRES_URL (each side then serves `storage: postgres` on that database, on a table of its own,
# without TLS: postgres://postgres@127.0.0.1:$PG_PORT/postgres for the throwaway PostgreSQL that
# scripts/pg.sh's pg_start makes).
set -euo pipefail
shopt -s inherit_errexit
source "$(dirname "$0")/bench-lib.sh"
bench_two_builds "$@"
cd "$(dirname "$0")/.."
bench_need_perf
ROUNDS=${AB_ROUNDS:-4}
SECONDS_EACH=${AB_SECONDS:-5}

mkdir -p "${BENCH_DIR:-.bench}"
DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/ab-XXXXXX")
declare -A URLS PID
stop_all() {
  local status=$?
  for pid in "${PID[@]}"; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  # A run that failed: what the servers said, before their folder goes.
  [ "$status" = 0 ] || tail -n 5 "$DIR"/*.err 2> /dev/null >&2 || true
  rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

for side in A B; do
  binary=${BINARIES[0]}
  [ "$side" = B ] && binary=${BINARIES[1]}
  mkdir -p "$DIR/$side"
  bench_config "$DIR/$side/config.yaml"
  if [ -n "${AB_POSTGRES_URL:-}" ]; then
    printf "storage: postgres\npostgres:\n  url: '%s'\n  table: ab_%s_%s\n  tls: disable\n" \
      "${AB_POSTGRES_URL//\'/\'\'}" "${side,,}" "$(basename "$DIR" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')" >> "$DIR/$side/config.yaml"
  fi
  LOG_LEVEL=warning "$binary" serve --config "$DIR/$side/config.yaml" > "$DIR/$side.out" 2> "$DIR/$side.err" &
  PID[$side]=$!
  URLS[$side]=$(listening "$DIR/$side.out" "$!")
done
export BENCH_POST_BODY=$PWD/scripts/bench-post.json
# A warm-up of each, so that threads started on first use are running when the counts begin.
for side in A B; do wrk_run -t1 -c64 -d1s -s scripts/bench-post.lua "${URLS[$side]}/announcements" > /dev/null; done

# measure SIDE CONNECTIONS PATH [wrk options…]: "REQUESTS_A_SECOND CPU_MS SWITCHES REQUESTS", refusing
# any non-2xx answer.
measure() {
  local side=$1 connections=$2 path=$3
  shift 3
  perf stat -x, -e task-clock,context-switches -p "${PID[$side]}" -o "$DIR/perf.csv" -- sleep "$SECONDS_EACH" &
  local perf=$! out
  out=$(wrk_run -t1 -c"$connections" -d"${SECONDS_EACH}s" "$@" "${URLS[$side]}$path") || return 1
  wait "$perf" || { echo "perf stat failed: $(tail -3 "$DIR/perf.csv" 2> /dev/null)" >&2; return 1; }
  local rate requests
  rate=$(awk '/^Requests\/sec/ { printf "%d", $2 }' <<< "$out")
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  echo "$rate $(awk -F, '$3 == "task-clock" { cpu = $1 } $3 == "context-switches" { sw = $1 } END { printf "%.0f %.0f", cpu, sw }' "$DIR/perf.csv") $requests"
}

IFS=, read -ra WORKLOADS <<< "${AB_WORKLOADS:-POST 1,POST 16,POST 64,GET 64}"
declare -A RATE CPU SWITCHES REQUESTS
for workload in "${WORKLOADS[@]}"; do
  for side in A B; do RATE[$side $workload]=0; CPU[$side $workload]=0; SWITCHES[$side $workload]=0; REQUESTS[$side $workload]=0; done
done
echo "A: $1"
echo "B: $2"
for round in $(seq "$ROUNDS"); do
  order="A B"
  [ $((round % 2)) = 0 ] && order="B A"
  for workload in "${WORKLOADS[@]}"; do
    read -r method connections <<< "$workload"
    for side in $order; do
      case $method in
        POST) figures=$(measure "$side" "$connections" /announcements -s scripts/bench-post.lua) ;;
        LIST) figures=$(measure "$side" "$connections" /announcements -H 'Accept-Version: 2.0') ;;
        HEALTH) figures=$(measure "$side" "$connections" /health) ;;
        *) figures=$(measure "$side" "$connections" /announcements/2) ;;
      esac
      read -r rate cpu switches requests <<< "$figures"
      RATE[$side $workload]=$((RATE[$side $workload] + rate))
      CPU[$side $workload]=$((CPU[$side $workload] + cpu))
      SWITCHES[$side $workload]=$((SWITCHES[$side $workload] + switches))
      REQUESTS[$side $workload]=$((REQUESTS[$side $workload] + requests))
      echo "round $round, $side, $workload conn.: $rate/s"
    done
  done
done
echo
echo "Means of $ROUNDS alternating rounds of ${SECONDS_EACH}s (wrk -t1); per request, the server's CPU and context switches:"
for workload in "${WORKLOADS[@]}"; do
  awk -v name="$workload" -v n="$ROUNDS" \
    -v ra="${RATE[A $workload]}" -v rb="${RATE[B $workload]}" \
    -v ca="${CPU[A $workload]}" -v cb="${CPU[B $workload]}" \
    -v sa="${SWITCHES[A $workload]}" -v sb="${SWITCHES[B $workload]}" \
    -v qa="${REQUESTS[A $workload]}" -v qb="${REQUESTS[B $workload]}" 'BEGIN {
      printf "%-8s conn.  A %6.0f/s %6.1f µs %5.2f sw   B %6.0f/s %6.1f µs %5.2f sw   B/A %.2f, CPU %.2f\n", name,
        ra / n, ca * 1000 / qa, sa / qa, rb / n, cb * 1000 / qb, sb / qb, rb / ra, (cb / qb) / (ca / qa)
    }'
done
