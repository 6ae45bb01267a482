# A throwaway PostgreSQL cluster: Debian's PostgreSQL, initdb'd in a temporary folder, on 127.0.0.1
# only, on a free port, with PostgreSQL's durable defaults said out loud (fsync=on,
# synchronous_commit=on), trusting every local connection (`--auth=trust`, user postgres). Sourced by
# scripts/pg-bench.sh (`make bench`: the events table and pgbench on top) and scripts/test.sh
# (`make test`: the tests' own database):
#   pg_start [PARENT [TOOL…]]  find (or, as root, install) Debian's PostgreSQL, whose bin folder
#                              must hold postgres, initdb, pg_ctl and every TOOL (pgbench, psql…);
#                              initdb a cluster in a temporary folder under PARENT (default
#                              $BENCH_DIR, else .bench) and start it on 127.0.0.1 on a free port.
#                              Sets PG_BIN (that bin folder), PG_DIR (the temporary folder: the
#                              cluster in data/, its log in server.log, its unix socket) and PG_PORT.
#                              On failure returns 1 with the reason in PG_SKIP; pg_stop cleans up.
#   pg_stop                    stop the cluster and delete its folder (safe to call twice, or
#                              before pg_start)
# As root, PostgreSQL runs as the `postgres` user (it refuses root), so PARENT and every folder
# above it must let that user through (o+x: /tmp and .bench in a checkout under /work do).

PG_DIR=
PG_BIN=
PG_PORT=
PG_SKIP=

# Runs a PostgreSQL binary as the `postgres` user when we are root (PostgreSQL refuses to run as
# root), as ourselves otherwise.
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_find_bin [TOOL…]: the newest Debian PostgreSQL's bin folder holding postgres, initdb, pg_ctl
# and every TOOL (the /usr/bin wrappers of postgresql-common pick a cluster from /etc/postgresql,
# which a throwaway cluster does not have).
pg_find_bin() {
  local dir tool found
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    found=1
    for tool in postgres initdb pg_ctl "$@"; do
      [ -x "$dir/$tool" ] || { found=; break; }
    done
    if [ -n "$found" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

pg_start() {
  local parent=${1:-${BENCH_DIR:-.bench}}
  shift $(($# > 0 ? 1 : 0))
  local tools="postgres, initdb, pg_ctl${*:+ and $*}"
  if ! PG_BIN=$(pg_find_bin "$@"); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "PostgreSQL is missing: installing Debian's postgresql (pgbench and psql come with it)…" >&2
      if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; } >&2; then
        PG_SKIP="apt-get install postgresql failed"; return 1
      fi
      # Debian's package starts a cluster of its own on port 5432; ours does not use it.
      PG_BIN=$(pg_find_bin "$@") || { PG_SKIP="postgresql installed, but no /usr/lib/postgresql/*/bin with $tools"; return 1; }
    else
      PG_SKIP="PostgreSQL is missing (no /usr/lib/postgresql/*/bin with $tools): apt-get install postgresql, as root"
      return 1
    fi
  fi
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    PG_SKIP="running as root and there is no 'postgres' user to run PostgreSQL as (it refuses root)"; return 1
  fi
  mkdir -p "$parent" || { PG_SKIP="cannot create $parent"; return 1; }
  PG_DIR=$(mktemp -d "$(cd "$parent" && pwd)/pg-XXXXXX") || { PG_DIR=; PG_SKIP="cannot create a temporary folder in $parent"; return 1; }
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
        "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR -c max_connections=300 -c fsync=on -c synchronous_commit=on" \
        > /dev/null 2>&1; then
      break
    fi
    PG_PORT=
  done
  [ -n "$PG_PORT" ] || { PG_SKIP="PostgreSQL did not start: $(tail -n 3 "$PG_DIR/server.log" 2>/dev/null | tr '\n' ' ')"; return 1; }
}

pg_stop() {
  if [ -n "$PG_DIR" ]; then
    # postmaster.pid, not PG_PORT: a start that timed out may have left a server running.
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop > /dev/null 2>&1 || true; fi
    rm -rf "$PG_DIR"
  fi
  PG_DIR= PG_PORT=
}
