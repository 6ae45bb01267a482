# Sourced by the benchmark scripts that start servers of their own (scripts/http-bench.sh,
# scripts/handovers-bench.sh, scripts/timeline-bench.sh, scripts/ab-bench.sh, scripts/cores-bench.sh,
# scripts/nodes-bench.sh, scripts/shared-bench.sh, scripts/growth-bench.sh):
#   wrk_run ARGS…       runs wrk (pinned with taskset to the cores in WRK_PIN when set) and prints
#                       its output; fails, printing it, when an answer was not 2xx or no request
#                       was answered (a figure that would be measured as if it were answers)
#   wrk_rate ARGS…      the requests a second of wrk_run, a whole number
#   bench_seed URL      four POSTs of scripts/bench-post.json to a bench server of the shipped
#                       config: its list then holds 10 announcements, as issue 37 measures it
#   bench_need_perf     stops the script, saying why, unless wrk and perf are here and perf may
#                       count in this process's children (perf_event_paranoid)
#   bench_config FILE   writes the shipped config.yaml to FILE for a bench server: port 0, the log
#                       log.jsonl beside it, the writer token bench-token (scripts/bench-post.lua
#                       sends it). Fails, saying so, when config.yaml has no token line to replace
#                       (every POST would then be a 401, measured as if it were a write).
#   bench_start_both DIR BIN BENCH_BIN
#                       starts the server BIN on a bench config (bench_config) in DIR, and the bare
#                       Hummingbird server (`BENCH_BIN bare`) beside it; sets SERVER and BARE (their
#                       pids, for the caller to stop) and URL and BARE_URL (where they listen)
#   bench_serve_both NAME
#                       for a script that measures the release server beside the bare one:
#                       checks that both release builds are there (BIN, BENCH_BIN), makes the folder
#                       DIR (NAME-XXXXXX under BENCH_DIR, default .bench), starts both in it
#                       (bench_start_both) and sets BENCH_POST_BODY for scripts/bench-post.lua; on
#                       exit stops them and the script's other background jobs, and removes DIR
#   bench_stop_both     an EXIT trap: stops the servers SERVER and BARE (either may be empty),
#                       the script's background jobs with what they started, and removes DIR
#   bench_two_builds A B for a script that compares two builds (its arguments): stops it with its usage
#                       unless both are executables; sets BINARIES to their absolute paths (called
#                       before the script moves to the project's root, from where it was called)
#   bench_kill_tree PID stops PID and every process it started, theirs too (a background job's
#                       wrk, which `wrk_run` starts in a command substitution: a grandchild)
#   listening OUT PID   waits (10 s at most) for the `listening on URL` line in the file OUT, which
#                       the server PID writes its stdout to; prints the URL. Returns 1, with the
#                       server's stderr (OUT with `.err` for `.out`), when it exits or says nothing.
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

bench_config() {
  sed -e 's|^port: .*|port: 0|' -e 's|^log: .*|log: log.jsonl|' -e 's|editor: env:ANNOUNCEMENTS_TOKEN|bench: bench-token|' config.yaml > "$1"
  grep -q 'bench: bench-token' "$1" || {
    echo "config.yaml has no 'editor: env:ANNOUNCEMENTS_TOKEN' line for the bench token to replace; update scripts/bench-lib.sh"
    return 1
  }
}

wrk_run() {
  local out
  out=$(${WRK_PIN:+taskset -c "$WRK_PIN"} wrk "$@") || { echo "wrk failed: wrk $*" >&2; return 1; }
  if grep -q 'Non-2xx' <<< "$out" || ! grep -qE '^ *[1-9][0-9]* requests in' <<< "$out"; then
    echo "wrk got errors or no answer from ${*: -1}, which would be measured as if they were answers:" >&2
    echo "$out" >&2
    return 1
  fi
  echo "$out"
}

wrk_rate() {
  local out
  out=$(wrk_run "$@") || return 1
  awk '/^Requests\/sec/ { printf "%d\n", $2 }' <<< "$out"
}

bench_seed() {
  for _ in 1 2 3 4; do
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
      --data-binary "@scripts/bench-post.json" "$1/announcements" || { echo "a POST to $1/announcements failed (curl exit $?)" >&2; return 1; }
  done
  local items
  items=$(curl -sf -H 'Accept-Version: 2.0' "$1/announcements" -D - -o /dev/null | tr -d '\r' | awk -F': ' 'tolower($1) == "x-total-count" { print $2 }')
  [ "$items" = 10 ] || { echo "GET /announcements lists ${items:-no} items instead of 10; the seed in config.yaml changed?" >&2; return 1; }
}

bench_need_perf() {
  local tool
  for tool in wrk perf; do
    command -v "$tool" > /dev/null || { echo "$tool is missing (Debian: apt-get install ${tool/perf/linux-perf})"; exit 1; }
  done
  perf stat -e context-switches -- true > /dev/null 2>&1 \
    || { echo "perf cannot count here (perf_event_open refused: see /proc/sys/kernel/perf_event_paranoid)"; exit 1; }
}

bench_start_both() {
  bench_config "$1/config.yaml"
  LOG_LEVEL=warning "$2" serve --config "$1/config.yaml" > "$1/server.out" 2> "$1/server.err" &
  SERVER=$!
  LOG_LEVEL=warning "$3" bare > "$1/bare.out" 2> "$1/bare.err" &
  BARE=$!
  URL=$(listening "$1/server.out" "$SERVER")
  BARE_URL=$(listening "$1/bare.out" "$BARE")
}

bench_serve_both() {
  BIN=.build/release/announcements
  BENCH_BIN=.build/release/AnnouncementsBench
  for tool in "$BIN" "$BENCH_BIN"; do [ -x "$tool" ] || { echo "$tool is missing: run 'swift build -c release' first"; exit 1; }; done
  mkdir -p "${BENCH_DIR:-.bench}"
  DIR=$(mktemp -d "$(cd "${BENCH_DIR:-.bench}" && pwd)/$1-XXXXXX")
  SERVER= BARE=
  trap bench_stop_both EXIT
  trap 'exit 130' INT TERM
  bench_start_both "$DIR" "$BIN" "$BENCH_BIN"
  export BENCH_POST_BODY=$PWD/scripts/bench-post.json
}

bench_two_builds() {
  [ $# -eq 2 ] || { echo "usage: $0 A_BINARY B_BINARY"; exit 2; }
  local binary
  for binary in "$1" "$2"; do
    [ -x "$binary" ] || { echo "$binary is not an executable: build each side with 'swift build -c release' and copy .build/release/announcements aside"; exit 1; }
  done
  BINARIES=("$(realpath "$1")" "$(realpath "$2")")
}

bench_kill_tree() {
  local child children
  # The parent first (its children found before): a job whose wrk died first would say so.
  children=$(pgrep -P "$1" || true)
  kill "$1" 2> /dev/null || true
  for child in $children; do bench_kill_tree "$child"; done
}

bench_stop_both() {
  local pid
  # Whatever else the script left running in the background (a wrk, a perf), with the programs
  # each started (`wrk_run` runs wrk in a command substitution of its own: a grandchild).
  for pid in $(jobs -p); do bench_kill_tree "$pid"; done
  for pid in $SERVER $BARE $(jobs -p); do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  rm -rf "$DIR"
}
