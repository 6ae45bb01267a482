# A server for the scripts that talk to one, in a temporary folder of its own. Sourced:
#   server_start BIN [ARGUMENT…]  runs `BIN serve --port 0 ARGUMENT…` (a free port on 127.0.0.1),
#                                 its output in $SERVER_DIR, and waits (at most 60 s: a debug build
#                                 on a busy machine starts slowly) for it to listen; sets SERVER_URL.
#                                 Returns 1, with what it said, when it does not start.
#   server_stop                   stops it with SIGTERM; returns 1 unless it stops cleanly.
#   admin_config TOKEN            writes $SERVER_DIR/config.yaml: the log in that folder, an admin's
#                                 TOKEN (history, asOf and erasure too), two seeded announcements.
# SERVER_DIR (made when sourced) is removed on exit, after the server (if still running) and every
# process in HELPER_PIDS (what a script started beside it: a proxy, a client) are stopped.

SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/announcements-XXXXXX")
SERVER_PID=
SERVER_URL=
HELPER_PIDS=()
server_cleanup() {
  local pid
  for pid in ${HELPER_PIDS[@]+"${HELPER_PIDS[@]}"} $SERVER_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$SERVER_DIR"
}
trap server_cleanup EXIT

server_start() {
  local bin=$1
  shift
  LOG_LEVEL=warning "$bin" serve --port 0 "$@" > "$SERVER_DIR/out" 2> "$SERVER_DIR/err" &
  SERVER_PID=$!
  for _ in $(seq 600); do
    grep -q listening "$SERVER_DIR/out" && break
    kill -0 "$SERVER_PID" 2>/dev/null || break  # a server that died is not waited for
    sleep 0.1
  done
  SERVER_URL=$(sed -n 's/^listening on //p' "$SERVER_DIR/out")
  [ -n "$SERVER_URL" ] || { echo "the server did not start:"; cat "$SERVER_DIR/err"; return 1; }
}

server_stop() {
  kill "$SERVER_PID"
  local status=0
  wait "$SERVER_PID" || status=$?
  SERVER_PID=
  [ "$status" = 0 ] || { echo "the server did not stop cleanly (exit $status):"; tail -20 "$SERVER_DIR/err"; return 1; }
}

admin_config() {
  cat > "$SERVER_DIR/config.yaml" <<YAML
log: log.jsonl
tokens:
  admin: {token: $1, role: admin}
seed:
  - title: Welcome
    body: "<p>Hello</p>"
  - title: Lunch
YAML
}
