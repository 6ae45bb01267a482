#!/usr/bin/env bash
# What every core shares (issue 37, goal 5, where no many-core machine is at hand): for each
# workload, wrk runs against a release server while perf counts, in the server's process, per
# request: the `swift_retain` calls (atomic writes to an object's count), the futex calls (a lock
# contended, a thread waiting or woken), the contended acquisitions of Swift's `Mutex`, the
# `pthread_mutex_lock` calls and the context switches; and records the retains and the locks, with
# the object or mutex and the call stack, to name the hot ones that two threads or more reach as
# requests come (their cache lines move between cores), and where the contended `Mutex`es are. Beside it, the same for the bare Hummingbird server
# (`AnnouncementsBench bare`), so that what the framework shares is apart from what ours adds.
# First it says whether `perf c2c` (cache lines shared between cores, from the CPU's memory
# sampling) can run here. Not in `make bench`: uprobes slow the server tenfold, so its rates mean
# nothing; only the counts do.
#
# Workloads, 64 connections each: GET /health, the v2 list of 10, one announcement, a durable POST
# (scripts/bench-post.json); the bare server's /health and POST echo.
#
# Usage: scripts/shared-bench.sh   (as root, for the uprobes; after `make release` and
#   `swift build -c release --static-swift-stdlib`, whose binaries hold the Swift runtime's
#   symbols; needs perf, wrk, readelf and python3; swift-demangle makes the names readable)
# Environment: SHARED_SECONDS (each run, default 2), SHARED_SERVER (the server's binary, default
#   .build/release/announcements: another build's, to compare), BENCH_DIR (temporary folders, default .bench),
#   SHARED_KEEP (set: its folder is kept, with the last run's perf files), SHARED_TOP (how many hot
#   objects and mutexes each run names, default 6), SHARED_ONLY (an extended regular expression:
#   only the workloads whose names match it run, e.g. '^GET /ann' for the list and one announcement).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

BIN=${SHARED_SERVER:-.build/release/announcements}
BENCH_BIN=.build/release/AnnouncementsBench
SECONDS_EACH=${SHARED_SECONDS:-2}
for tool in "$BIN" "$BENCH_BIN"; do [ -x "$tool" ] || { echo "$tool is missing: run 'make release' and 'swift build -c release --static-swift-stdlib' first"; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "uprobes need root: run it as root"; exit 1; }
command -v readelf > /dev/null || { echo "readelf is missing: apt-get install binutils"; exit 1; }
bench_need_perf
PATH=$PATH:$(dirname "$(command -v swift 2> /dev/null || echo /opt/swift/usr/bin/swift)")

mkdir -p "${BENCH_DIR:-.bench}"
DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/shared-XXXXXX")
SERVER= BARE= PERF_JOBS=
stop_all() {
  # perf's jobs first: a probe cannot be removed while one records it.
  for pid in $PERF_JOBS $SERVER $BARE; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  perf probe -q -d 'shared:*' 2> /dev/null || true
  [ -n "${SHARED_KEEP:-}" ] || rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

if perf c2c record -o "$DIR/c2c.data" -- true > "$DIR/c2c.out" 2>&1; then
  echo "perf c2c can run here: perf c2c record -p PID, then perf c2c report, names the contended cache lines"
else
  echo "perf c2c cannot run here ($(tail -n 1 "$DIR/c2c.out")): this CPU or VM offers no memory sampling; counting instead"
fi

# probe SIDE BINARY: uprobes on swift_retain (with the object), swift_allocObject's return (the
# object made) and Mutex's contended path, named shared:retain_SIDE, shared:alloc_SIDE__return and
# shared:mutex_slow_SIDE (an event's name is unique across groups).
probe() {
  local side=$1 binary=$2 retain alloc slow
  # One read of the symbols (a release binary holds some 300,000): the three addresses, "-" for one
  # it does not define.
  read -r retain alloc slow < <(nm "$binary" | awk '
    $3 == "swift_retain" { at["retain"] = $1 }
    $3 == "swift_allocObject" { at["alloc"] = $1 }
    $3 == "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF" { at["slow"] = $1 }
    END { printf "%s %s %s\n", at["retain"] ? at["retain"] : "-", at["alloc"] ? at["alloc"] : "-", at["slow"] ? at["slow"] : "-" }')
  [ "$retain" != - ] && [ "$alloc" != - ] && [ "$slow" != - ] || {
    echo "$binary holds no swift_retain, swift_allocObject or Mutex._lockSlow of its own: build it with --static-swift-stdlib (make release does), not stripped"
    return 1
  }
  perf probe -q -x "$binary" -a "shared:retain_$side=0x$retain obj=%di:u64"
  perf probe -q -x "$binary" -a "shared:alloc_$side=0x$alloc%return ret=\$retval:u64"
  perf probe -q -x "$binary" -a "shared:mutex_slow_$side=0x$slow"
}
perf probe -q -d 'shared:*' 2> /dev/null || true
probe ours "$BIN"
probe bare "$BENCH_BIN"
LIBC=$(ldd "$BIN" | awk '$1 ~ /^libc\.so/ { print $3 }')
perf probe -q -x "$LIBC" -a 'shared:pthread_mutex_lock=pthread_mutex_lock mutex=%di:u64'

bench_start_both "$DIR" "$BIN" "$BENCH_BIN"
export BENCH_POST_BODY=$PWD/scripts/bench-post.json
bench_seed "$URL"

# run PID SIDE BINARY URL NAME [wrk options…]
run() {
  local pid=$1 side=$2 binary=$3 url=$4 name=$5
  shift 5
  [[ -z "${SHARED_ONLY:-}" || "$name" =~ $SHARED_ONLY ]] || return 0
  perf stat -x, -e "shared:retain_$side,shared:mutex_slow_$side,shared:pthread_mutex_lock,syscalls:sys_enter_futex,context-switches" \
    -p "$pid" -o "$DIR/stat.csv" -- sleep "$SECONDS_EACH" &
  PERF_JOBS=$!
  perf record -q -g -e "shared:retain_$side" -e "shared:alloc_${side}__return" -p "$pid" -o "$DIR/retains.data" -- sleep "$SECONDS_EACH" > /dev/null 2>&1 &
  PERF_JOBS="$PERF_JOBS $!"
  perf record -q -g -e shared:pthread_mutex_lock -e "shared:mutex_slow_$side" -p "$pid" -o "$DIR/locks.data" -- sleep "$SECONDS_EACH" > /dev/null 2>&1 &
  PERF_JOBS="$PERF_JOBS $!"
  local out requests
  out=$(wrk_run -t1 -c64 -d"${SECONDS_EACH}s" "$@" "$url") || return 1
  for job in $PERF_JOBS; do wait "$job" || { echo "perf failed (job $job); SHARED_KEEP=1 keeps its files" >&2; return 1; }; done
  PERF_JOBS=
  requests=$(awk '/requests in/ { print $1 }' <<< "$out")
  for kind in retains locks; do
    perf script -i "$DIR/$kind.data" -F tid,event,trace,ip,sym --show-mmap-events > "$DIR/$kind.txt" 2> "$DIR/$kind.err" \
      || { echo "perf script failed on $kind.data: $(tail -n 3 "$DIR/$kind.err")" >&2; return 1; }
  done
  python3 scripts/shared_objects.py "$DIR/retains.txt" "$DIR/locks.txt" "$DIR/stat.csv" "$(realpath "$binary")" "$requests" "$name" "${SHARED_TOP:-6}"
}

# A warm-up of each, so that threads started on first use are running when the counts begin.
wrk_run -t1 -c64 -d1s -s scripts/bench-post.lua "$URL/announcements" > /dev/null
wrk_run -t1 -c64 -d1s -s scripts/bench-post.lua "$BARE_URL/announcements" > /dev/null
echo "Per request, in the server's process (wrk -t1 -c64, ${SECONDS_EACH}s each):"
run "$BARE" bare "$BENCH_BIN" "$BARE_URL/health" "bare GET /health"
run "$SERVER" ours "$BIN" "$URL/health" "GET /health"
run "$SERVER" ours "$BIN" "$URL/announcements" "GET /announcements (v2, 10)" -H 'Accept-Version: 2.0'
run "$SERVER" ours "$BIN" "$URL/announcements/2" "GET /announcements/2"
run "$BARE" bare "$BENCH_BIN" "$BARE_URL/announcements" "bare POST echo" -s scripts/bench-post.lua
run "$SERVER" ours "$BIN" "$URL/announcements" "durable POST" -s scripts/bench-post.lua
