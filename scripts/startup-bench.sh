#!/usr/bin/env bash
# Start-up for `make bench` (issue 14: the server reaches `listening` on the 1,000,000-event bench
# log in at most 1 s): the time from the server's process start to its `listening on` line, first
# cold (nothing beside the log: a full replay), then again after a SIGTERM, with whatever the
# server left beside the log at shutdown (a snapshot). Also the server's peak resident memory
# (VmHWM) once it listens.
#
# The bench log itself is never written: the server gets a hard link to it in a temporary folder
# on the same disk (a copy where links are not possible), with a config that enables no writer,
# and the log's size and modification time are checked afterwards. The server appends seed events
# only to an empty log, and writes its snapshots beside the link, in the temporary folder.
#
# Usage: scripts/startup-bench.sh LOG
# Environment (optional): BENCH_DIR (default .bench), BENCH_GOALS (the goals file to append to),
# STARTUP_BENCH_TIMEOUT (seconds to wait for `listening`, default 120), LIVE_TEXT_MB (the live
# announcements' text, from the Python fold, printed beside the memory).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

LOG=${1:?usage: scripts/startup-bench.sh LOG}
BIN=.build/release/announcements
BENCH_DIR=${BENCH_DIR:-.bench}
TIMEOUT=${STARTUP_BENCH_TIMEOUT:-120}
[ -x "$BIN" ] || { echo "$BIN is missing: run 'make release' first"; exit 1; }
[ -f "$LOG" ] || { echo "$LOG is missing: generate it with AnnouncementsBench generate"; exit 1; }

goal() {
  if [ -n "${BENCH_GOALS:-}" ]; then (IFS=$'\t'; echo "$*") >> "$BENCH_GOALS"; fi
}

mkdir -p "$BENCH_DIR"
DIR=$(mktemp -d "$(cd "$BENCH_DIR" && pwd)/startup-XXXXXX")
SERVER= READER=
trap 'for pid in $SERVER $READER; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -rf "$DIR"' EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap stops the server on Ctrl-C too

before=$(stat -c '%s %Y' "$LOG")
if ln "$LOG" "$DIR/log.jsonl" 2>/dev/null; then how="a hard link to"
else cp --reflink=auto "$LOG" "$DIR/log.jsonl"; how="a copy of"
fi
# The shipped config on the log in the temporary folder, on any free port, with no writer.
sed -e 's|^port: .*|port: 0|' -e 's|^log: .*|log: log.jsonl|' -e 's|^\( *editor\): env:.*|\1: env:ANNOUNCEMENTS_BENCH_NO_WRITER|' \
  config.yaml > "$DIR/config.yaml"
mkfifo "$DIR/stdout"

# start: starts the server, waits for `listening on`, and sets TOOK to the seconds that took,
# from just before the process started to when its line came out of the pipe. (Called directly,
# not in `$(…)`: the server must be this shell's child, for `stop` to wait for it.)
start() {
  # The last run's lines go first: the reader below truncates its file only once it runs, and a
  # `listening on` left from the last run must not be taken for this one's.
  rm -f "$DIR/out"
  # Each line of the server's output with the moment it arrived.
  while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done < "$DIR/stdout" > "$DIR/out" &
  READER=$!
  local started=$EPOCHREALTIME
  env -u ANNOUNCEMENTS_BENCH_NO_WRITER LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml" > "$DIR/stdout" 2> "$DIR/err" &
  SERVER=$!
  local deadline=$((SECONDS + TIMEOUT))
  until grep -qs ' listening on ' "$DIR/out"; do
    if ! kill -0 "$SERVER" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      echo "the server did not reach 'listening' in ${TIMEOUT}s:" >&2; cat "$DIR/err" >&2; return 1
    fi
    sleep 0.05
  done
  TOOK=$(awk -v started="$started" '/ listening on / { printf "%.3f", $1 - started; exit }' "$DIR/out")
}

# Peak resident memory of the running server, in MB (Linux).
peak() { awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$SERVER/status" 2>/dev/null || echo "?"; }

# stop: SIGTERM, then waits for the server to exit; sets TOOK to the seconds that took.
stop() {
  local asked=$EPOCHREALTIME
  kill -TERM "$SERVER"
  wait "$SERVER" || { echo "the server exited with status $? after SIGTERM:" >&2; cat "$DIR/err" >&2; return 1; }
  wait "$READER" || true
  SERVER= READER=
  TOOK=$(awk -v a="$asked" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
}

beside() { # what lies beside the log, but the log itself and this script's files
  (cd "$DIR" && find . -maxdepth 1 -type f ! -name log.jsonl ! -name config.yaml ! -name out ! -name err -printf '%f (%s bytes) ') || true
}

events=$(wc -l < "$LOG" | tr -d ' ')
echo "Start-up on $how $LOG ($events events, $(($(stat -c %s "$LOG") / 1000000)) MB), time to 'listening on':"
[ -z "$(beside)" ] || { echo "files beside the log before the cold start: $(beside)"; exit 1; }
start; cold=$TOOK
cold_peak=$(peak)
stop; cold_stop=$TOOK
echo "  cold (no snapshot):    $cold s, peak RSS $cold_peak MB${LIVE_TEXT_MB:+ (live text: $LIVE_TEXT_MB MB)}; stopped in $cold_stop s after SIGTERM"
left=$(beside)
echo "  left beside the log: ${left:-nothing}"
start; warm=$TOOK
warm_peak=$(peak)
stop; warm_stop=$TOOK
echo "  restart (with it):     $warm s, peak RSS $warm_peak MB; stopped in $warm_stop s after SIGTERM"

after=$(stat -c '%s %Y' "$LOG")
[ "$before" = "$after" ] || { echo "$LOG changed during the start-up benchmark (size and mtime '$before' -> '$after'): generate it again"; exit 1; }

# The goal is start-up through the snapshot; the cold start (a full replay) is printed above, for
# comparison, and is not held to one second.
goal most "start-up to listening, from the snapshot" "$warm" s 1
