#!/usr/bin/env bash
# `make bench`, issues 15 and 38: several nodes on one PostgreSQL table (scripts/pg.sh starts a
# throwaway one), side by side in one run, alternating:
#
#   durable POSTs, 1, 16 and 64 connections one node alone on the table | the plain Hummingbird +
#                                           postgres-nio app of scripts/peers/ (one INSERT per POST,
#                                           .build/release/PeerHummingbirdPostgres), alternating
#   one connection's floor                  1 / (one round trip of the bare Hummingbird server
#                                           echoing the same POST + one row of it committed alone by
#                                           pgbench): what no server can beat here, to judge the
#                                           goal at one connection by
#   durable POSTs, 16 and 64 connections    all on node A | spread over A and B | over A, B and C
#                                           (the connections split evenly: every node has writes
#                                           to make all the time, as under a round-robin balancer);
#                                           the CPU each POST took, on the whole machine and in each
#                                           node and PostgreSQL (from /proc)
#   following                               a POST to A, then B polled (no Min-Seq) until it serves
#                                           the new announcement: how long until it is visible there;
#                                           and one GET on B with Min-Seq (read-your-writes)
#
# Issue 38's goals: one node at least 1.5x the peer at each count; spread over 2 and 3 nodes, at
# least 0.9 of one node's rate at each count.
#
# Environment (optional): BENCH_DIR (default .bench), NODES_BENCH_SECONDS (per wrk run, default 5),
# NODES_BENCH_ROUNDS (default 3), NODES_BENCH_SAMPLES (follow samples, default 200),
# NODES_BENCH_BIN (the server binary, default .build/release/announcements).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/bench-lib.sh

BIN=${NODES_BENCH_BIN:-.build/release/announcements}
BENCH_DIR=${BENCH_DIR:-.bench}
SECONDS_EACH=${NODES_BENCH_SECONDS:-5}
ROUNDS=${NODES_BENCH_ROUNDS:-3}
SAMPLES=${NODES_BENCH_SAMPLES:-200}
[ -x "$BIN" ] || { echo "$BIN is missing: run 'make release' first"; exit 1; }
command -v wrk > /dev/null || { echo "several-node figures skipped: wrk is missing (apt-get install wrk)"; exit 0; }
command -v python3 > /dev/null || { echo "several-node figures skipped: python3 is missing"; exit 0; }

mkdir -p "$BENCH_DIR"
DIR= NODES= ALONE=
stop_all() {
  for pid in $NODES $ALONE; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  pg_stop
  [ -z "$DIR" ] || rm -rf "$DIR"
}
trap stop_all EXIT
trap 'exit 130' INT TERM
pg_start "$BENCH_DIR" psql || { echo "several-node figures skipped: $PG_SKIP"; exit 0; }
DIR=$(mktemp -d "$(cd "$BENCH_DIR" && pwd)/nodes-XXXXXX")
echo "PostgreSQL $("$PG_BIN/postgres" --version | sed 's/^postgres (PostgreSQL) //') on 127.0.0.1:$PG_PORT, fsync=on, synchronous_commit=on"

cat > "$DIR/config.yaml" <<YAML
port: 0
storage: postgres
postgres:
  url: postgres://postgres@127.0.0.1:$PG_PORT/postgres
  table: nodes_bench
  tls: disable
tokens:
  bench: bench-token
YAML

export BENCH_POST_BODY=$PWD/scripts/bench-post.json

# post_rate CONNECTIONS URL: durable POSTs per second at URL/announcements (bench-lib's wrk_rate:
# a run with an answer that is not a 2xx, or none, stops the script, saying so).
post_rate() {
  wrk_rate -t1 -c"$1" -d"${SECONDS_EACH}s" -s scripts/bench-post.lua "$2/announcements"
}

# One node alone on a table of its own beside the peer, before the three start. At one connection,
# the floor of any server's durable POST is measured too, in the same rounds: one round trip of the
# bare Hummingbird server echoing the same body (AnnouncementsBench bare), then one row of the same
# size inserted and committed alone by pgbench (prepared, one client): 1 / (1/echo + 1/commit).
PEER=.build/release/PeerHummingbirdPostgres
BARE_BIN=.build/release/AnnouncementsBench
if [ -x "$PEER" ]; then
  sed 's/^  table: nodes_bench$/  table: nodes_bench_alone/' "$DIR/config.yaml" > "$DIR/alone.yaml"
  "$PG_BIN/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres \
    -c "CREATE TABLE peer_hb (id bigserial PRIMARY KEY, title text NOT NULL, body text)" \
    -c "CREATE TABLE floor_commit (id bigserial PRIMARY KEY, title text NOT NULL, body text)" > /dev/null
  # The bench body's title and body as SQL literals, in one INSERT for pgbench (its colons escaped:
  # pgbench reads `:name` as a variable).
  python3 - "$BENCH_POST_BODY" > "$DIR/commit.sql" <<'PY'
import json, sys
post = json.load(open(sys.argv[1]))
literal = lambda text: "E'" + text.replace("\\", "\\\\").replace("'", "''").replace(":", "\\x3a") + "'"
print("INSERT INTO floor_commit (title, body) VALUES (%s, %s);" % (literal(post["title"]), literal(post["body"])))
PY
  LOG_LEVEL=warning "$BIN" serve --config "$DIR/alone.yaml" > "$DIR/alone.out" 2> "$DIR/alone.err" &
  ALONE=$!
  PEER_PG_PORT=$PG_PORT PEER_TABLE=peer_hb "$PEER" > "$DIR/peer.out" 2> "$DIR/peer.err" &
  ALONE+=" $!"
  alone_url=$(listening "$DIR/alone.out" "${ALONE%% *}")
  peer_url=$(listening "$DIR/peer.out" "${ALONE##* }")
  bare_url=
  if [ -x "$BARE_BIN" ] && [ -x "$PG_BIN/pgbench" ]; then
    LOG_LEVEL=warning "$BARE_BIN" bare > "$DIR/bare.out" 2> "$DIR/bare.err" &
    ALONE+=" $!"
    bare_url=$(listening "$DIR/bare.out" "$!")
  else
    echo "one connection's floor skipped: $BARE_BIN or $PG_BIN/pgbench is missing"
  fi
  # commit_rate: rows inserted and committed a second by pgbench, one client, prepared.
  commit_rate() {
    "$PG_BIN/pgbench" -n -M prepared -c1 -T "$SECONDS_EACH" -f "$DIR/commit.sql" -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres 2> /dev/null \
      | awk '/^tps = / { printf "%d\n", $3 }'
  }
  declare -A OURS PEERS
  ECHOS=0 COMMITS=0
  for round in $(seq "$ROUNDS"); do
    for connections in 1 16 64; do
      # Every other round the other way round, so that the machine's drift falls on both.
      if ((round % 2)); then ours=$(post_rate "$connections" "$alone_url"); peer=$(post_rate "$connections" "$peer_url")
      else peer=$(post_rate "$connections" "$peer_url"); ours=$(post_rate "$connections" "$alone_url"); fi
      echo "round $round: durable POSTs, $connections connection(s): one node on PostgreSQL $ours/s, the Hummingbird + postgres-nio peer $peer/s"
      OURS[$connections]=$(awk -v a="${OURS[$connections]:-0}" -v b="$ours" 'BEGIN { print a + b }')
      PEERS[$connections]=$(awk -v a="${PEERS[$connections]:-0}" -v b="$peer" 'BEGIN { print a + b }')
      if [ "$connections" = 1 ] && [ -n "$bare_url" ]; then
        echo1=$(post_rate 1 "$bare_url")
        commit1=$(commit_rate)
        [ -n "$commit1" ] || { echo "pgbench failed: $DIR/commit.sql" >&2; exit 1; }
        echo "round $round: the bare server's echo of the same POST, 1 connection, $echo1/s; one row committed alone (pgbench, prepared, 1 client) $commit1/s"
        ECHOS=$((ECHOS + echo1)) COMMITS=$((COMMITS + commit1))
      fi
    done
  done
  for connections in 1 16 64; do
    awk -v o="${OURS[$connections]}" -v p="${PEERS[$connections]}" -v n="$ROUNDS" -v k="$connections" \
      'BEGIN { r = o / p; printf "durable POSTs, %d connection(s), one node on PostgreSQL, mean of %d: %.0f/s against the peer'"'"'s %.0f/s: %.2fx (goal 1.5: %s)\n", k, n, o / n, p / n, r, (r >= 1.5 ? "met" : "NOT met") }'
  done
  if [ -n "$bare_url" ]; then
    # Whether 1.5x the peer at one connection is within what any server could do here.
    awk -v e="$ECHOS" -v c="$COMMITS" -v o="${OURS[1]}" -v p="${PEERS[1]}" -v n="$ROUNDS" 'BEGIN {
      floor = 1 / (n / e + n / c); goal = 1.5 * p / n
      printf "durable POST, 1 connection: the floor 1 / (1/%.0f + 1/%.0f) = %.0f/s (the bare echo, then one commit alone; means); one node on PostgreSQL at %.2f of it; 1.5x the peer is %.0f/s, %s\n",
        e / n, c / n, floor, o / n / floor, goal, (goal > floor ? sprintf("%.2f of the floor: out of reach of any server here", goal / floor) : sprintf("%.2f of the floor", goal / floor)) }'
  fi
  for pid in $ALONE; do kill "$pid" 2> /dev/null || true; wait "$pid" 2> /dev/null || true; done
  ALONE=
else
  echo "one node against the peer skipped: $PEER is missing (swift build -c release --product PeerHummingbirdPostgres)"
fi

# Three nodes on the table; URLS[i] is node i's address.
URLS=()
for node in a b c; do
  LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml" > "$DIR/$node.out" 2> "$DIR/$node.err" &
  NODES+=" $!"
  url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$DIR/$node.out")
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "node $node did not start:"; cat "$DIR/$node.err"; exit 1; }
  URLS+=("$url")
done

# The machine's busy CPU time so far, in clock ticks (every process: the nodes, PostgreSQL, wrk).
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# pid_ticks PID: that process's CPU time so far (user and system), in clock ticks; 0 once it is gone.
pid_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null || echo 0; }

# process_ticks: the CPU time so far of node A, B and C, and of this PostgreSQL's processes (its
# postmaster and every process it started), in clock ticks: "A B C PG". A process that ends
# between two looks takes its time out of the second (PostgreSQL's sessions here last the run).
process_ticks() {
  local postmaster pid node=() pg=0
  for pid in $NODES; do node+=("$(pid_ticks "$pid")"); done
  postmaster=$(head -n 1 "$PG_DIR/data/postmaster.pid" 2> /dev/null || true)
  for pid in $postmaster $(pgrep -P "${postmaster:-0}" || true); do pg=$((pg + $(pid_ticks "$pid"))); done
  echo "${node[*]} $pg"
}

# posts NODES CONNECTIONS: "RATE CPU A B C PG": durable POSTs per second, CONNECTIONS split over
# the first NODES nodes, summed; the machine's CPU time per POST, and that of node A, B and C and
# of PostgreSQL, in microseconds.
posts() {
  local count=$1 connections=$2 pids=() node each before processes
  for ((node = 0; node < count; node++)); do
    each=$(((connections + node) / count))
    wrk -t1 -c"$each" -d"${SECONDS_EACH}s" -s scripts/bench-post.lua "${URLS[$node]}/announcements" > "$DIR/wrk-$node.out" &
    pids+=($!)
  done
  before=$(busy_ticks)
  processes=$(process_ticks)
  wait "${pids[@]}"
  local ticks=$(($(busy_ticks) - before))
  processes=$(paste -d ' ' <(tr ' ' '\n' <<< "$processes") <(process_ticks | tr ' ' '\n') | awk '{ printf "%d ", $2 - $1 }')
  for ((node = 0; node < count; node++)); do
    if grep -q 'Non-2xx' "$DIR/wrk-$node.out"; then echo "wrk got errors from node $node:" >&2; cat "$DIR/wrk-$node.out" >&2; return 1; fi
  done
  local figures
  figures=$(cat "$DIR"/wrk-*.out | awk -v ticks="$ticks" -v processes="$processes" -v hz="$(getconf CLK_TCK)" -v seconds="$SECONDS_EACH" \
    '/Requests\/sec/ { sum += $2 } END {
      posts = sum * seconds; printf "%.0f %.0f", sum, ticks / hz * 1e6 / posts
      n = split(processes, each, " "); for (i = 1; i <= n; i++) printf " %.0f", each[i] / hz * 1e6 / posts
      printf "\n" }')
  # Removed before the figures are printed: the caller reads them through a process substitution
  # and starts the next run's wrk at once, whose files a later removal would take (a round of 0/s).
  rm -f "$DIR"/wrk-*.out
  echo "$figures"
}

declare -A SUMS CPUS
for round in $(seq "$ROUNDS"); do
  for connections in 16 64; do
    for count in 1 2 3; do
      read -r rate cpu a b c pg < <(posts "$count" "$connections")
      echo "round $round: durable POSTs, $connections connections over $count node(s): $rate/s, $cpu µs of CPU each (node A $a, B $b, C $c, PostgreSQL $pg)"
      SUMS[$connections.$count]=$(awk -v a="${SUMS[$connections.$count]:-0}" -v b="$rate" 'BEGIN { print a + b }')
      CPUS[$connections.$count]=$(awk -v a="${CPUS[$connections.$count]:-0}" -v b="$cpu" 'BEGIN { print a + b }')
    done
  done
done
for connections in 16 64; do
  one=${SUMS[$connections.1]}
  for count in 1 2 3; do
    awk -v s="${SUMS[$connections.$count]}" -v n="$ROUNDS" -v one="$one" -v c="$count" -v k="$connections" -v cpu="${CPUS[$connections.$count]}" \
      'BEGIN { r = s / one; printf "durable POSTs, %d connections over %d node(s), mean of %d: %.0f/s (%.2f of one node%s), %.0f µs of CPU each\n", k, c, n, s / n, r, c == 1 ? "" : (r >= 0.9 ? "; goal 0.9: met" : "; goal 0.9: NOT met"), cpu / n }'
  done
done

# Following: how long until a write through A is served by B, which is not asked to wait.
python3 - "${URLS[0]}" "${URLS[1]}" "$SAMPLES" <<'PY'
import http.client, json, sys, time, urllib.parse
a, b, samples = urllib.parse.urlparse(sys.argv[1]), urllib.parse.urlparse(sys.argv[2]), int(sys.argv[3])
ca, cb = http.client.HTTPConnection(a.hostname, a.port), http.client.HTTPConnection(b.hostname, b.port)
headers = {"Content-Type": "application/json", "Authorization": "Bearer bench-token"}
def request(connection, method, path, body=None, extra={}):
    connection.request(method, path, body=body, headers={**headers, **extra})
    response = connection.getresponse()
    return response.status, response.getheader("Log-Seq"), response.read()
visible, minseq = [], []
for n in range(samples):
    status, seq, body = request(ca, "POST", "/announcements", json.dumps({"title": f"follow {n}"}))
    assert status == 201, body
    path = f"/announcements/{json.loads(body)['id']}"
    start = time.perf_counter()
    while request(cb, "GET", path)[0] != 200:
        if time.perf_counter() - start > 10:
            sys.exit(f"node B did not serve {path} within 10 s of its write through A")
        time.sleep(0.001)
    visible.append(time.perf_counter() - start)
    status, seq, body = request(ca, "POST", "/announcements", json.dumps({"title": f"read your write {n}"}))
    start = time.perf_counter()
    status, _, body = request(cb, "GET", f"/announcements/{json.loads(body)['id']}", extra={"Min-Seq": seq})
    assert status == 200, body
    minseq.append(time.perf_counter() - start)
def summary(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] * 1000
    return f"median {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {values[-1] * 1000:.1f} ms"
print(f"a write through A served by B (polled, no Min-Seq), {samples} writes: {summary(visible)}")
print(f"a read on B with Min-Seq right after a write through A, {samples} reads: {summary(minseq)}")
PY
