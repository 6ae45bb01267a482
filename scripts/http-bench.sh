#!/usr/bin/env bash
# HTTP figures for `make bench`: wrk against a release server on 127.0.0.1, each read route as a
# ratio of the server's own ceiling (GET /health, the cheapest route), durable POSTs, and durable
# POSTs while 100 clients follow the log's Server-Sent Events stream.
# The server runs with LOG_LEVEL=warning: no access-log line per request.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk"; exit 1; }

BIN=.build/release/announcements
DIR=$(mktemp -d "${TMPDIR:-/tmp}/announcements-bench-XXXXXX")
SECONDS_EACH=${HTTP_BENCH_SECONDS:-5}
SERVER=  # set before the trap: under `set -u` an unset one would stop the trap before its `rm`
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; fi; rm -rf "$DIR"' EXIT

# The shipped seed, a writer token, and a fresh log in a temporary folder.
sed -e 's|^port: .*|port: 0|' -e 's|^log: .*|log: log.jsonl|' -e 's|editor: env:ANNOUNCEMENTS_TOKEN|bench: bench-token|' config.yaml > "$DIR/config.yaml"
# Without the token every POST below would be a 401, measured as if it were a write.
grep -q 'bench: bench-token' "$DIR/config.yaml" || {
  echo "config.yaml has no 'editor: env:ANNOUNCEMENTS_TOKEN' line for the bench token to replace; update scripts/http-bench.sh"
  exit 1
}
LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml" > "$DIR/out" 2> "$DIR/err" &
SERVER=$!
for _ in $(seq 50); do grep -q listening "$DIR/out" && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$DIR/out")
[ -n "$URL" ] || { cat "$DIR/err"; exit 1; }

rate() { # rate NAME CONNECTIONS [wrk options…] PATH
  local name=$1 connections=$2; shift 2
  wrk -t2 -c"$connections" -d"${SECONDS_EACH}s" "$@" | awk '/Requests\/sec/ {print $2}'
}

cat > "$DIR/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-token"
wrk.body = '{"title":"Benchmark announcement","body":"<p>A body of a typical length for an intranet announcement, with a <a href=\\"https://intranet.example.com\\">link</a>.</p>"}'
LUA

ceiling=$(rate health 64 "$URL/health")
v2=$(rate v2 64 -H 'Accept-Version: 2.0' "$URL/announcements")
v1=$(rate v1 64 -H 'Accept-Version: 1.0' "$URL/announcements")
one=$(rate one 64 "$URL/announcements/2")
post=$(rate post 64 -s "$DIR/post.lua" "$URL/announcements")

printf "%-40s %12s %10s\n" "route (64 connections, ${SECONDS_EACH}s each)" "requests/s" "ratio"
for row in "GET /health (ceiling):$ceiling" "GET /announcements v2 (10 items):$v2" "GET /announcements v1 (10 items):$v1" "GET /announcements/2:$one" "POST /announcements (durable):$post"; do
  name=${row%:*}; value=${row##*:}
  awk -v name="$name" -v value="$value" -v ceiling="$ceiling" 'BEGIN { printf "%-40s %12.0f %10.2f\n", name, value, value / ceiling }'
done

# Durable POSTs with followers of the event stream (curl, reading as fast as it can), between two
# runs without them, so that the machine's drift falls on both sides alike.
FOLLOWERS=${HTTP_BENCH_FOLLOWERS:-100}
[ "$FOLLOWERS" -gt 0 ] || exit 0
seq_now() { curl -s "$URL/health" | sed 's/.*"seq":\([0-9]*\).*/\1/'; }
size() { wc -c < "$DIR/log.jsonl"; }
alone_before=$(rate post 64 -s "$DIR/post.lua" "$URL/announcements")
after=$(seq_now)
for _ in $(seq "$FOLLOWERS"); do
  nice -n 19 curl -sN -o /dev/null --max-time $((SECONDS_EACH + 3)) -w '%{size_download}\n' \
    -H 'Accept: text/event-stream' "$URL/events?after=$after" >> "$DIR/followers" &
done
sleep 1
start_bytes=$(size)
followed=$(rate post 64 -s "$DIR/post.lua" "$URL/announcements")
end_bytes=$(size)
wait $(jobs -p | grep -v "^$SERVER\$") 2>/dev/null || true
# A stream notices that its client left when it next sends: one more event ends them all.
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' -H 'Authorization: Bearer bench-token' \
  -d '{"title":"Followers gone"}' "$URL/announcements"
sleep 2
alone_after=$(rate post 64 -s "$DIR/post.lua" "$URL/announcements")
awk -v followed="$followed" -v a="$alone_before" -v b="$alone_after" -v n="$FOLLOWERS" \
    -v appended=$((end_bytes - start_bytes)) -v got="$(awk '{ s += $1 } END { print s / NR }' "$DIR/followers")" 'BEGIN {
  printf "%-40s %12.0f %10s\n", "POST /announcements, " n " SSE followers", followed, sprintf("%.2f", followed / ((a + b) / 2))
  printf "  (of the %.0f and %.0f POSTs/s without followers just before and after; each follower\n", a, b
  printf "   received %.0f MB of events while %.0f MB were appended)\n", got / 1e6, appended / 1e6
}'
