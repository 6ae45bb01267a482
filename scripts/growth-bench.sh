#!/usr/bin/env bash
# Two builds of the server side by side on durable POSTs long enough for the state to grow past a
# few snapshots (what 5 s rounds never reach): each run starts a fresh server of one build on a
# fresh log of the shipped config (with the bench's token), runs wrk (one thread) with POSTs of
# scripts/bench-post.json at 64 connections, and stops it; the builds alternate (A B B A …). Prints
# each run's POSTs a second, the server's CPU per POST (its process's, from /proc) and the
# snapshots it wrote (seen as the snapshot file was replaced; polled every 0.2 s), then each
# side's means and the ratios B/A.
#
# Usage: scripts/growth-bench.sh A_BINARY B_BINARY   (release builds of `announcements`; needs wrk)
# Environment: GROWTH_RUNS (runs of each side, default 2), GROWTH_SECONDS (each run, default 45),
# GROWTH_CONNECTIONS (default 64), BENCH_DIR (default .bench; a run's log is removed as the next
# starts, and the last at the end).
set -euo pipefail
shopt -s inherit_errexit
source "$(dirname "$0")/bench-lib.sh"
bench_two_builds "$@"
cd "$(dirname "$0")/.."
command -v wrk > /dev/null || { echo "wrk is missing (Debian: apt-get install wrk)"; exit 1; }
RUNS=${GROWTH_RUNS:-2}
SECONDS_EACH=${GROWTH_SECONDS:-45}
CONNECTIONS=${GROWTH_CONNECTIONS:-64}
for value in "$RUNS" "$SECONDS_EACH" "$CONNECTIONS"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "GROWTH_RUNS, GROWTH_SECONDS and GROWTH_CONNECTIONS take whole numbers from 1; got '$value'"; exit 2; }
done
TICKS=$(getconf CLK_TCK)
export BENCH_POST_BODY=$PWD/scripts/bench-post.json

mkdir -p "${BENCH_DIR:-.bench}"
DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/growth-XXXXXX")
SERVER= BARE=
trap bench_stop_both EXIT
trap 'exit 130' INT TERM

# The CPU time (user and system) of process $1 so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# One run of side $1 (A or B): sets RESULT to "POSTs/s µs-CPU-per-POST snapshots" (not printed:
# a command substitution would run it in a subshell, out of reach of the EXIT trap's stop of
# its server).
run() {
  local binary=${BINARIES[0]} run_dir=$DIR/run url start end snapshots=0 seen= inode out requests
  [ "$1" = B ] && binary=${BINARIES[1]}
  rm -rf "$run_dir" && mkdir -p "$run_dir"
  bench_config "$run_dir/config.yaml"
  LOG_LEVEL=warning "$binary" serve --config "$run_dir/config.yaml" > "$run_dir/server.out" 2> "$run_dir/server.err" &
  SERVER=$!
  url=$(listening "$run_dir/server.out" "$SERVER")
  start=$(cpu_ticks "$SERVER")
  wrk_run -t1 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" -s scripts/bench-post.lua "$url/announcements" > "$run_dir/wrk.out" &
  local wrk=$!
  while kill -0 "$wrk" 2> /dev/null; do
    inode=$(stat -c %i "$run_dir/log.jsonl.snapshot" 2> /dev/null || true)
    if [ -n "$inode" ] && [ "$inode" != "$seen" ]; then snapshots=$((snapshots + 1)); seen=$inode; fi
    sleep 0.2
  done
  wait "$wrk" || { echo "wrk failed on side $1; the server said:" >&2; tail -n 5 "$run_dir/server.err" >&2; return 1; }
  end=$(cpu_ticks "$SERVER")
  kill "$SERVER"; wait "$SERVER" 2> /dev/null || true; SERVER=
  out=$(cat "$run_dir/wrk.out")
  requests=$(awk '/ requests in / { print $1 }' <<< "$out")
  RESULT=$(awk -v rate="$(awk '/^Requests\/sec/ { print $2 }' <<< "$out")" -v ticks=$((end - start)) -v hz="$TICKS" -v n="$requests" -v s="$snapshots" \
    'BEGIN { printf "%.0f %.1f %d", rate, ticks / hz * 1e6 / n, s }')
}

echo "A: ${BINARIES[0]}"
echo "B: ${BINARIES[1]}"
declare -A RESULTS
for round in $(seq "$RUNS"); do
  order=(A B)
  [ $((round % 2)) = 0 ] && order=(B A)
  for side in "${order[@]}"; do
    run "$side"
    RESULTS[$side]+="$RESULT"$'\n'
    read -r rate cpu snapshots <<< "$RESULT"
    echo "run $round, $side: durable POSTs, $CONNECTIONS conn., ${SECONDS_EACH}s: $rate/s, $cpu µs of server CPU each, $snapshots snapshots written"
  done
done
echo
echo "Means of $RUNS runs of each side, alternating:"
mean() { awk -v column="$2" 'NF { total += $column; n++ } END { printf "%.1f", total / n }' <<< "${RESULTS[$1]}"; }
awk -v ra="$(mean A 1)" -v rb="$(mean B 1)" -v ca="$(mean A 2)" -v cb="$(mean B 2)" -v sa="$(mean A 3)" -v sb="$(mean B 3)" \
  'BEGIN { printf "A %.0f/s %.1f µs %.1f snapshots   B %.0f/s %.1f µs %.1f snapshots   B/A %.2f, CPU %.2f\n", ra, ca, sa, rb, cb, sb, rb / ra, cb / ca }'
