#!/usr/bin/env bash
# Where a request's time goes between threads (issue 37, goal 5): for each workload, wrk runs
# against a release server for a few seconds while `perf stat` counts, in the server's process,
# the context switches (each a thread going to sleep or being woken: a hand-over between threads
# or a wait), the migrations between cores and the CPU time; per request, and per thread name
# (SwiftNIO's event loops, the store's committer and syncer, Dispatch's and Swift's pool threads).
# Beside it, the same counts for the bare Hummingbird server (`AnnouncementsBench bare`) on the
# same request, so that what the framework itself costs is apart from what ours adds.
#
# Workloads: durable POST at 1 and 64 connections (scripts/bench-post.json; the bare server echoes
# it), GET /announcements/2 at 64 (the bare server: GET /health).
#
# Usage: scripts/handovers-bench.sh   (after `swift build -c release`; needs perf and wrk)
# Environment: HANDOVERS_SECONDS (each run, default 5), BENCH_DIR (temporary folders, default .bench).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

SECONDS_EACH=${HANDOVERS_SECONDS:-5}
bench_need_perf
bench_serve_both handovers

# run PID CONNECTIONS URL NAME [wrk options…]: wrk for SECONDS_EACH while perf counts in PID; prints
# one summary line and the busiest threads.
run() {
  local pid=$1 connections=$2 url=$3 name=$4
  shift 4
  perf stat --per-thread -x, -e context-switches,cpu-migrations,task-clock -p "$pid" -o "$DIR/perf.csv" -- sleep "$SECONDS_EACH" &
  local perf=$!
  local out requests
  out=$(wrk_run -t1 -c"$connections" -d"${SECONDS_EACH}s" "$@" "$url") || return 1
  wait "$perf" || { echo "perf stat failed: $(tail -3 "$DIR/perf.csv" 2> /dev/null)" >&2; return 1; }
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  # perf's CSV per thread: "comm-tid,value,unit,event,…"; threads grouped by name without the tid.
  awk -F, -v n="$requests" -v name="$name" '
    $4 == "context-switches" || $4 == "cpu-migrations" || $4 == "task-clock" {
      thread = $1; sub(/-[0-9]+$/, "", thread)
      value[thread, $4] += $2; total[$4] += $2; threads[thread] = 1
    }
    END {
      printf "%-40s %9.0f req, %6.2f switches/req, %5.2f migrations/req, %6.1f µs CPU/req\n", name, n,
        total["context-switches"] / n, total["cpu-migrations"] / n, total["task-clock"] * 1000 / n
      for (t in threads) if (value[t, "context-switches"] / n >= 0.05)
        printf "    %-36s %6.2f switches/req, %6.1f µs CPU/req\n", t, value[t, "context-switches"] / n, value[t, "task-clock"] * 1000 / n
    }' "$DIR/perf.csv"
}

# A warm-up, so that threads started on first use are running when the counts begin.
wrk_run -t1 -c64 -d1s -s scripts/bench-post.lua "$URL/announcements" > /dev/null
wrk_run -t1 -c64 -d1s -s scripts/bench-post.lua "$BARE_URL/announcements" > /dev/null
echo "Per request, in the server's process (wrk -t1, ${SECONDS_EACH}s each):"
run "$BARE" 1 "$BARE_URL/announcements" "bare echo POST, 1 conn." -s scripts/bench-post.lua
run "$SERVER" 1 "$URL/announcements" "durable POST, 1 conn." -s scripts/bench-post.lua
run "$BARE" 64 "$BARE_URL/announcements" "bare echo POST, 64 conn." -s scripts/bench-post.lua
run "$SERVER" 64 "$URL/announcements" "durable POST, 64 conn." -s scripts/bench-post.lua
run "$BARE" 64 "$BARE_URL/health" "bare GET /health, 64 conn."
run "$SERVER" 64 "$URL/announcements/2" "GET /announcements/2, 64 conn."
