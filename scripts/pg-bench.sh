#!/usr/bin/env bash
# A throwaway PostgreSQL for `make bench`: the anchor of "many writers over HTTP". Each pgbench
# transaction inserts one event row holding the benchmark's POST body (scripts/bench-post.json,
# 1.1 KB of JSON, as jsonb) into an events table, the row an event store in PostgreSQL would write,
# with PostgreSQL's durable defaults, said out loud: fsync=on, synchronous_commit=on.
#
# Sourced by scripts/http-bench.sh, which alternates pgbench runs with its HTTP runs:
#   pg_start            find (or, as root, install) Debian's PostgreSQL, initdb a cluster in a
#                       temporary folder under $BENCH_DIR (the disk the store's log is on), and
#                       start it on 127.0.0.1 on a free port; on failure returns 1 with the reason
#                       in $PG_SKIP
#   pg_rate N SECONDS   pgbench with N connections for SECONDS: prints transactions per second
#   pg_stop             stop the cluster and delete its folder (safe to call twice, or before start)
# Run alone (scripts/pg-bench.sh), it prints the rates at 1, 16 and 64 connections.
#
# Environment: BENCH_DIR (default .bench), PG_BENCH_SECONDS (alone: seconds per run, default 5).

PG_DIR=
PG_BIN=
PG_PORT=
PG_SKIP=

# Runs a PostgreSQL binary as the `postgres` user when we are root (PostgreSQL refuses to run as
# root), as ourselves otherwise.
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The newest Debian PostgreSQL's bin folder (the /usr/bin wrappers of postgresql-common pick a
# cluster from /etc/postgresql, which a throwaway cluster does not have).
pg_find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/postgres" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pgbench" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

pg_start() {
  local bench_dir=${BENCH_DIR:-.bench}
  if ! PG_BIN=$(pg_find_bin); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "PostgreSQL is missing: installing Debian's postgresql (and pgbench with it)…" >&2
      if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } >&2; then
        PG_SKIP="apt-get install postgresql failed"; return 1
      fi
      # Debian's package starts a cluster of its own on port 5432; ours does not use it.
      PG_BIN=$(pg_find_bin) || { PG_SKIP="postgresql installed, but no /usr/lib/postgresql/*/bin with postgres, initdb and pgbench"; return 1; }
    else
      PG_SKIP="PostgreSQL is missing (no /usr/lib/postgresql/*/bin/pgbench): apt-get install postgresql, as root"
      return 1
    fi
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    PG_SKIP="running as root and there is no 'postgres' user to run PostgreSQL as (it refuses root)"; return 1
  fi
  mkdir -p "$bench_dir"
  PG_DIR=$(mktemp -d "$(cd "$bench_dir" && pwd)/pg-XXXXXX")
  if [ "$(id -u)" = 0 ]; then chown postgres "$PG_DIR"; fi
  if ! pg_as_owner test -w "$PG_DIR"; then
    PG_SKIP="the postgres user cannot reach $PG_DIR (a parent folder without o+x?)"; return 1
  fi
  # --no-sync: the cluster is thrown away; its own writes below are synced as usual.
  if ! pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust --no-sync -E UTF8 > "$PG_DIR/initdb.out" 2>&1; then
    PG_SKIP="initdb failed: $(tail -n 3 "$PG_DIR/initdb.out" | tr '\n' ' ')"; return 1
  fi
  local attempt
  for attempt in 1 2 3 4 5; do
    # A port from the ephemeral range is usually free; another process may take it first, hence the retries.
    PG_PORT=$((20000 + (RANDOM * 32768 + RANDOM) % 30000))
    if pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 start -o \
        "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR -c max_connections=100 -c fsync=on -c synchronous_commit=on" \
        > /dev/null 2>&1; then
      break
    fi
    PG_PORT=
  done
  [ -n "$PG_PORT" ] || { PG_SKIP="PostgreSQL did not start: $(tail -n 3 "$PG_DIR/server.log" 2>/dev/null | tr '\n' ' ')"; return 1; }
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

pg_stop() {
  if [ -n "$PG_DIR" ]; then
    if [ -n "$PG_PORT" ]; then pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop > /dev/null 2>&1 || true; fi
    rm -rf "$PG_DIR"
  fi
  PG_DIR= PG_PORT=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  cd "$(dirname "$0")/.."
  trap pg_stop EXIT
  trap 'exit 130' INT TERM  # so that the EXIT trap stops the servers on Ctrl-C too
  pg_start || { echo "skipped: $PG_SKIP"; exit 0; }
  for connections in 1 16 64; do
    printf "pgbench, %2d connections: %8.0f inserts/s\n" "$connections" "$(pg_rate "$connections" "${PG_BENCH_SECONDS:-5}")"
  done
fi
