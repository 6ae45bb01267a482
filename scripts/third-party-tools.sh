#!/usr/bin/env bash
# Tools nobody here wrote, against a live server: a client generated from the served
# /openapi.yaml by openapi-python-client (scripts/openapi_client_check.py: every documented
# operation in it, each called once), the event stream through a minimal nginx config
# (`location / { proxy_pass …; }`, nginx's defaults: buffered, HTTP/1.0 to the server), and
# /metrics through `promtool check metrics`, and two nodes on one PostgreSQL table behind nginx with
# docs/operations.md's configuration and a copy of its walk-through (make test's throwaway PostgreSQL). Each tool is installed when missing (PyPI into
# .build/python-tools; Debian's nginx-light and prometheus with apt, as root); a check whose tool
# cannot be had is skipped saying why, and fails under CI (.ci/run sets CI). `make test` runs it
# with the debug build.
#
# Usage: scripts/third-party-tools.sh [path/to/announcements]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-tools.sh
source scripts/temp-server.sh
BIN=${1:-.build/debug/announcements}
TOKEN=tools-token
status=0
# nginx is in /usr/sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin

# apt_tool COMMAND PACKAGE: whether COMMAND is there, installing PACKAGE with apt as root when not.
apt_tool() {
  command -v "$1" >/dev/null && return 0
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
  echo "installing $2 (apt)…"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2"; } >/dev/null 2>&1 || true
  command -v "$1" >/dev/null
}

# A free port on 127.0.0.1 (for nginx, which cannot be told to take any).
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

admin_config "$TOKEN"
server_start "$BIN" --config "$SERVER_DIR/config.yaml"
echo "third-party tools against $SERVER_URL:"

# 1. openapi-python-client.
# (Pinned: the check reads the requests the generated functions build, in this version's layout.)
if python_tools openapi-python-client==0.29.1; then
  mkdir "$SERVER_DIR/generated"
  PATH="$PYTHON_TOOLS/bin:$PATH" TOKEN=$TOKEN "$PYTHON_TOOLS/bin/python" scripts/openapi_client_check.py "$SERVER_URL" "$SERVER_DIR/generated" || status=1
else
  unavailable "openapi-python-client" "$PYTHON_TOOLS_SKIP" || status=1
fi

# 2. The event stream through nginx: the stream's first comment, then a new event, must come
# through within seconds (buffered, nothing came in 40 s). Checks 2 and 3 talk through curl.
if ! apt_tool curl curl; then
  unavailable "the event stream through nginx" "curl is missing, and only root can install it (Debian: apt-get install curl)" || status=1
elif apt_tool nginx nginx-light; then
  port=$(free_port)
  cat > "$SERVER_DIR/nginx.conf" <<NGINX
daemon off;
$([ "$(id -u)" = 0 ] && echo "user root;")
pid $SERVER_DIR/nginx.pid;
error_log $SERVER_DIR/nginx-error.log;
events {}
http {
  access_log off;
  server {
    listen 127.0.0.1:$port;
    location / { proxy_pass $SERVER_URL; }
  }
}
NGINX
  # (Before it reads this config, nginx may warn that it cannot open its default error log.)
  nginx -p "$SERVER_DIR" -c "$SERVER_DIR/nginx.conf" 2>/dev/null &
  NGINX=$!
  HELPER_PIDS+=("$NGINX")
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
  curl -sN --max-time 20 -H "Accept: text/event-stream" "http://127.0.0.1:$port/events?after=2" > "$SERVER_DIR/stream" &
  STREAM=$!
  HELPER_PIDS+=("$STREAM")
  opened=no; delivered=no
  for _ in $(seq 100); do grep -qs "following the log" "$SERVER_DIR/stream" && { opened=yes; break; }; sleep 0.1; done
  seq=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
    -d '{"title":"Through nginx"}' -D - -o /dev/null "$SERVER_URL/announcements" | tr -d '\r' | sed -n 's/^[Ll]og-[Ss]eq: //p')
  for _ in $(seq 100); do grep -qs "^id: $seq$" "$SERVER_DIR/stream" && { delivered=yes; break; }; sleep 0.1; done
  kill "$STREAM" "$NGINX" 2>/dev/null || true
  wait "$STREAM" "$NGINX" 2>/dev/null || true
  if [ "$opened" = yes ] && [ "$delivered" = yes ]; then
    echo "ok    the event stream through nginx ($(nginx -v 2>&1 | sed 's/.*\///')): opened at once, the new event $seq within seconds"
  else
    echo "FAIL  the event stream through nginx: opened: $opened, event $seq delivered: $delivered; it received:"
    head -c 500 "$SERVER_DIR/stream"; echo; cat "$SERVER_DIR/nginx-error.log"
    status=1
  fi
else
  unavailable "the event stream through nginx" "nginx is missing, and only root can install it (Debian: apt-get install nginx-light)" || status=1
fi

# 3. promtool: every metric has help text, and the exposition is well formed.
if ! apt_tool curl curl; then
  unavailable "promtool check metrics" "curl is missing, and only root can install it (Debian: apt-get install curl)" || status=1
elif apt_tool promtool prometheus; then
  curl -sf "$SERVER_URL/metrics" > "$SERVER_DIR/metrics"
  if problems=$(promtool check metrics < "$SERVER_DIR/metrics" 2>&1) && [ -z "$problems" ]; then
    echo "ok    promtool check metrics: $(grep -c '^# HELP' "$SERVER_DIR/metrics") metrics, each with its help text"
  else
    echo "FAIL  promtool check metrics:"; echo "$problems"
    status=1
  fi
else
  unavailable "promtool check metrics" "promtool is missing, and only root can install it (Debian: apt-get install prometheus)" || status=1
fi

# 4. Two nodes on one PostgreSQL table behind nginx, with docs/operations.md's configuration as it
# is written there (its addresses replaced by the nodes' and nginx's ports), and what its
# walk-through does (its commands copied here, their outputs checked as the document shows them):
# a write through nginx, a read asking for it, the first node killed, three keyed writes, /health.
nodes_check() {
  local dir=$SERVER_DIR/nodes port node ports=() pids=() out
  # A table of this run's own (a PostgreSQL of your own keeps it: make test's is deleted).
  local table=announcement_events_nginx_$(date +%s)_$$
  mkdir "$dir"
  for node in 1 2; do
    cat > "$dir/node$node.yaml" <<YAML
storage: postgres
postgres:
  url: env:ANNOUNCEMENTS_TEST_POSTGRES_URL
  table: $table
tokens:
  editor: s3cret
seed:
  - title: Welcome to the intranet
YAML
    LOG_LEVEL=warning "$BIN" serve --config "$dir/node$node.yaml" --host 127.0.0.1 --port 0 > "$dir/out$node" 2> "$dir/err$node" &
    pids+=("$!")
    HELPER_PIDS+=("$!")
    # One after the other: the first seeds the table.
    for _ in $(seq 600); do grep -qs listening "$dir/out$node" && break; kill -0 "$!" 2>/dev/null || break; sleep 0.1; done
    port=$(sed -n 's|^listening on http://127.0.0.1:||p' "$dir/out$node")
    [ -n "$port" ] || { echo "FAIL  two nodes behind nginx: node $node did not start:"; cat "$dir/err$node"; return 1; }
    ports+=("$port")
  done
  port=$(free_port)
  # The document's block, from its ```nginx fence to the next fence.
  { echo "daemon off;"; [ "$(id -u)" = 0 ] && echo "user root;"
    echo "pid $dir/nginx.pid; error_log $dir/nginx-error.log; events {}"
    echo "http { access_log off;"
    sed -n '/^Two nodes behind nginx/,/^## /p' docs/operations.md | sed -n '/^```nginx$/,/^```$/p' | sed '1d;$d' \
      | sed -e "s/10\.0\.0\.11:8080/127.0.0.1:${ports[0]}/; s/10\.0\.0\.12:8080/127.0.0.1:${ports[1]}/; s/listen 80;/listen 127.0.0.1:$port;/"
    echo "}"; } > "$dir/nginx.conf"
  grep -q "server 127.0.0.1:${ports[0]} " "$dir/nginx.conf" && grep -q "server 127.0.0.1:${ports[1]} " "$dir/nginx.conf" \
    && grep -q "listen 127.0.0.1:$port;" "$dir/nginx.conf" \
    || { echo "FAIL  two nodes behind nginx: docs/operations.md's nginx block no longer names the addresses this check replaces:"; cat "$dir/nginx.conf"; return 1; }
  # (Before it reads the config, nginx may say that it cannot open its default error log.)
  nginx -p "$dir" -c "$dir/nginx.conf" 2> "$dir/nginx-stderr" &
  local nginx=$!
  HELPER_PIDS+=("$nginx")
  for _ in $(seq 100); do
    curl -sf --max-time 5 "http://127.0.0.1:$port/health" >/dev/null && break
    kill -0 "$nginx" 2>/dev/null || { echo "FAIL  two nodes behind nginx: nginx did not start with the document's block:"; cat "$dir/nginx-stderr" "$dir/nginx-error.log" 2>/dev/null; return 1; }
    sleep 0.1
  done
  local url=http://127.0.0.1:$port problems=()
  out=$(curl -si --max-time 30 "$url/announcements" -H 'Authorization: Bearer s3cret' -H 'Content-Type: application/json' \
    -d '{"title":"Parking","body":"<p>Level 2 is closed on Friday</p>"}' | tr -d '\r')
  grep -q '^HTTP/1.1 201 ' <<< "$out" && grep -q '^Server: nginx' <<< "$out" && grep -q '^Log-Seq: 2$' <<< "$out" \
    || problems+=("the write through nginx answered: $(head -c 600 <<< "$out")")
  out=$(curl -s --max-time 30 -H 'Min-Seq: 2' "$url/announcements")
  [ "$out" = '[{"id":1,"title":"Welcome to the intranet"},{"id":2,"title":"Parking"}]' ] \
    || problems+=("the read with Min-Seq: 2 answered: $out")
  kill -9 "${pids[0]}"
  wait "${pids[0]}" 2>/dev/null || true
  out=$(for i in 1 2 3; do curl -s --max-time 30 -o /dev/null -w '%{http_code} ' "$url/announcements" -H 'Authorization: Bearer s3cret' \
    -H 'Content-Type: application/json' -H "Idempotency-Key: after-kill-$i" -d "{\"title\":\"After the kill $i\"}"; done)
  [ "$out" = "201 201 201 " ] || problems+=("the three writes after the first node's kill -9 answered: $out")
  out=$(curl -s --max-time 30 "$url/health")
  grep -q '^{"status":"ok","seq":5,' <<< "$out" || problems+=("/health after them answered: $out")
  "$BIN" verify --config "$dir/node2.yaml" > "$dir/verify" 2>&1 || problems+=("verify of the table: $(cat "$dir/verify")")
  if [ ${#problems[@]} = 0 ]; then
    echo "ok    two nodes on one PostgreSQL table behind nginx, with docs/operations.md's configuration: a write, a read asking for it, the first node killed -9, three writes through the other, /health at seq 5, the table verifies"
  else
    echo "FAIL  two nodes behind nginx (docs/operations.md's configuration and walk-through):"
    printf '        %s\n' "${problems[@]}"
    echo "      nginx's errors:"; cat "$dir/nginx-stderr" "$dir/nginx-error.log" 2>/dev/null; echo "      the second node's:"; tail -20 "$dir/err2"
    return 1
  fi
}
if [ -z "${ANNOUNCEMENTS_TEST_POSTGRES_URL:-}" ]; then
  unavailable "two nodes behind nginx" "no PostgreSQL (ANNOUNCEMENTS_TEST_POSTGRES_URL: scripts/test.sh starts one)" || status=1
elif ! command -v nginx >/dev/null || ! command -v curl >/dev/null; then
  unavailable "two nodes behind nginx" "nginx or curl is missing (see the checks above)" || status=1
else
  nodes_check || status=1
fi

server_stop || status=1
"$BIN" verify --log "$SERVER_DIR/log.jsonl" > "$SERVER_DIR/verify" || { cat "$SERVER_DIR/verify"; status=1; }
exit $status
