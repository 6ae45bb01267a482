#!/usr/bin/env bash
# A throwaway PostgreSQL for `make bench`: the anchor of "many writers over HTTP". Each pgbench
# transaction inserts one event row holding the benchmark's POST body (scripts/bench-post.json,
# 1.1 KB of JSON, as jsonb) into an events table, the row an event store in PostgreSQL would write,
# with PostgreSQL's durable defaults, said out loud: fsync=on, synchronous_commit=on.
#
# Sourced by scripts/http-bench.sh, which alternates pgbench runs with its HTTP runs:
#   pg_bench_start      find (or, as root, install) Debian's PostgreSQL, initdb a cluster in a
#                       temporary folder under $BENCH_DIR (the disk the store's log is on), start
#                       it on 127.0.0.1 on a free port (scripts/pg.sh), and create the events table
#                       and pgbench's script; on failure returns 1 with the reason in $PG_SKIP
#   pg_rate N SECONDS   pgbench with N connections for SECONDS: prints transactions per second
#   pg_stop             stop the cluster and delete its folder (safe to call twice, or before start;
#                       scripts/pg.sh)
# Run alone (scripts/pg-bench.sh), it prints the rates at 1, 16 and 64 connections.
#
# Environment: BENCH_DIR (default .bench), PG_BENCH_SECONDS (alone: seconds per run, default 5).

# The throwaway cluster itself (pg_start, pg_stop, PG_DIR, PG_BIN, PG_PORT, PG_SKIP): scripts/pg.sh.
source "$(dirname "${BASH_SOURCE[0]}")/pg.sh"

pg_bench_start() {
  pg_start "${BENCH_DIR:-.bench}" pgbench psql || return 1
  local body
  body=$(sed "s/'/''/g" scripts/bench-post.json)
  # The row an event store writes: its position, the announcement, what happened, who, when, the
  # writer's idempotency key (unique, NULL without one: the benchmark's POSTs send none), the event.
  "$PG_BIN/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres > /dev/null <<SQL || { PG_SKIP="creating the events table failed"; return 1; }
CREATE SEQUENCE announcement_ids;
CREATE TABLE events (
  seq bigserial PRIMARY KEY,
  announcement_id bigint NOT NULL,
  type text NOT NULL,
  writer text NOT NULL,
  at timestamptz NOT NULL,
  idempotency_key text UNIQUE,
  line jsonb NOT NULL
);
SQL
  printf "INSERT INTO events (announcement_id, type, writer, at, line) VALUES (nextval('announcement_ids'), 'created', 'bench', now(), '%s');\n" "$body" > "$PG_DIR/insert.sql"
  local settings
  settings=$("$PG_BIN/psql" -At -X -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres -c \
    "SELECT 'PostgreSQL ' || current_setting('server_version') || ', fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit') || ', wal_sync_method=' || current_setting('wal_sync_method')")
  echo "$settings, on 127.0.0.1:$PG_PORT in $PG_DIR" >&2
}

pg_rate() {
  local connections=$1 seconds=$2
  local threads=$((connections < 2 ? connections : 2))
  "$PG_BIN/pgbench" -n -M prepared -f "$PG_DIR/insert.sql" -c "$connections" -j "$threads" -T "$seconds" \
      -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres 2> "$PG_DIR/pgbench.err" \
    | awk '/^tps = / { print $3; found = 1 } END { exit !found }' \
    || { echo "pgbench failed: $(tail -n 3 "$PG_DIR/pgbench.err")" >&2; return 1; }
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  trap pg_stop EXIT
  trap 'exit 130' INT TERM  # so that the EXIT trap stops the servers on Ctrl-C too
  pg_bench_start || { echo "skipped: $PG_SKIP"; exit 0; }
  for connections in 1 16 64; do
    printf "pgbench, %2d connections: %8.0f inserts/s\n" "$connections" "$(pg_rate "$connections" "${PG_BENCH_SECONDS:-5}")"
  done
fi
