#!/usr/bin/env bash
# Where one connection's durable POST spends its time (issue 37, goal 2), as a timeline: wrk sends
# one POST at a time to a release server while `perf sched record` traces every wake-up of the
# machine for a few seconds; each request is then cut into the phases between the wake-ups that
# hand it from thread to thread (wrk → SwiftNIO's event loop → the handler's task on Swift's pool
# → the store's committer → the pool → the event loop → wrk), and each phase's median and mean
# over all requests printed. The same for the bare Hummingbird server echoing the same body
# (`AnnouncementsBench bare`), whose handler never leaves the pool. Beside them, the disk's own
# write and `fdatasync` of one line (`AnnouncementsBench fsync`): goal 2's limit is the echo's
# round trip plus that.
#
# A phase runs from one wake-up to the next: the woken thread's wait for a core (its `sch delay`
# in `perf sched`), then its work until it wakes the next. Below the phases, each kind of thread's
# `sch delay`, median and mean, over every time it was switched in.
#
# Usage: scripts/timeline-bench.sh   (as root, after `swift build -c release`: `perf sched record`
# traces the whole machine; needs perf, wrk, python3)
# Environment: TIMELINE_SECONDS (the trace, default 3), BENCH_DIR (temporary folders, default .bench).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh

SECONDS_EACH=${TIMELINE_SECONDS:-3}
command -v python3 > /dev/null || { echo "python3 is needed to cut the trace into phases"; exit 1; }
bench_need_perf
probe=$(perf sched record -o /dev/null -- true 2>&1 > /dev/null) || {
  echo "perf sched record cannot trace the machine here (run as root, or lower perf_event_paranoid to -1): $probe"
  exit 1
}
bench_serve_both timeline

# trace NAME URL: wrk on one connection for the trace's length and a second on each side; prints
# the rate and the phases.
trace() {
  local name=$1 url=$2
  wrk_run -t1 -c1 -d"$((SECONDS_EACH + 2))s" -s scripts/bench-post.lua "$url/announcements" > "$DIR/wrk-$name.txt" &
  local wrk=$!
  sleep 1
  perf sched record -o "$DIR/sched-$name.data" -- sleep "$SECONDS_EACH" > /dev/null 2> "$DIR/perf.err" || { cat "$DIR/perf.err"; return 1; }
  wait "$wrk"
  perf sched timehist -w -i "$DIR/sched-$name.data" > "$DIR/timeline-$name.txt" 2> "$DIR/perf.err" || { cat "$DIR/perf.err"; return 1; }
  echo "$name: $(awk '/^Requests\/sec/ { printf "%d POSTs/s", $2 }' "$DIR/wrk-$name.txt"), one connection"
  python3 - "$DIR/timeline-$name.txt" << 'EOF'
import re, statistics, sys

def kind(task):
    if task.startswith("wrk"): return "wrk"
    if "NIO-" in task: return "event loop"
    if "overcommit" in task: return "committer"
    if "default-qos" in task: return "pool"
    return None

# "TIME [CPU] WAKER awakened: WAKEE": one hand-over from the waker's thread to the wakee's;
# "TIME [CPU] TASK WAIT SCH-DELAY RUN" (milliseconds): a task switched out.
wakes, delays = [], {}
for line in open(sys.argv[1]):
    match = re.match(r"\s*([\d.]+)\s+\[\d+\]\s+(.*?)\s+awakened:\s+(.*\S)", line)
    if match and kind(match[2]) and kind(match[3]):
        wakes.append((float(match[1]), kind(match[2]), kind(match[3])))
        continue
    match = re.match(r"\s*[\d.]+\s+\[\d+\]\s+(.*?)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*$", line)
    if match and kind(match[1]):
        delays.setdefault(kind(match[1]), []).append(float(match[2]) * 1000)

# A request starts when wrk wakes the event loop; its hand-overs are the first of each kind after it.
order = [("wrk", "event loop"), ("event loop", "pool"), ("pool", "committer"), ("committer", "pool"), ("pool", "event loop"), ("event loop", "wrk")]
requests, current = [], None
for time, waker, wakee in wakes:
    if (waker, wakee) == order[0]:
        if current and order[-1] in current: requests.append(current)
        current = {order[0]: time}
    elif current is not None and (waker, wakee) in order and (waker, wakee) not in current:
        current[(waker, wakee)] = time
steps = [step for step in order if sum(step in request for request in requests) > len(requests) / 2]
complete = [request for request in requests if all(step in request for step in steps)]
if len(complete) < 100:
    sys.exit(f"only {len(complete)} whole requests in the trace: too few to cut into phases")
print(f"  {len(complete)} requests traced; per request, median and mean (µs):")
for start, end in zip(steps, steps[1:]):
    spans = [(request[end] - request[start]) * 1e6 for request in complete]
    print(f"    {start[1] + ' (woken by ' + start[0] + ')':<32} until it wakes {end[1]:<12} {statistics.median(spans):7.1f} {statistics.mean(spans):7.1f}")
gaps = [(following[order[0]] - request[order[-1]]) * 1e6 for request, following in zip(complete, complete[1:])]
print(f"    {'wrk (woken by event loop)':<32} until it wakes {'event loop':<12} {statistics.median(gaps):7.1f} {statistics.mean(gaps):7.1f}")
cycles = [(following[order[0]] - request[order[0]]) * 1e6 for request, following in zip(complete, complete[1:])]
print(f"    {'the whole round trip':<45} {statistics.median(cycles):7.1f} {statistics.mean(cycles):7.1f}")
print("  each thread's wait for a core once woken or preempted (sch delay), median and mean (µs):")
for name, values in sorted(delays.items()):
    print(f"    {name:<12} {len(values):7d} times {statistics.median(values):7.1f} {statistics.mean(values):7.1f}")
EOF
}

# A warm-up, so that threads started on first use are running when the trace begins.
wrk_run -t1 -c16 -d1s -s scripts/bench-post.lua "$URL/announcements" > /dev/null
wrk_run -t1 -c16 -d1s -s scripts/bench-post.lua "$BARE_URL/announcements" > /dev/null
trace "durable POST" "$URL"
trace "bare echo POST" "$BARE_URL"
"$BENCH_BIN" fsync --dir "$DIR/fsync" --seconds 2
