#!/usr/bin/env bash
# `make bench`, issue 15: the store on a PostgreSQL log beside the store on a file and beside
# pgbench inserting the same rows, all on one throwaway PostgreSQL (scripts/pg.sh), alternating:
#
#   durable appends, 1, 16 and 64 writers   AnnouncementsBench append (file) | append --postgres |
#                                           append --postgres --shared (as `serve` opens it) |
#                                           pgbench: one INSERT of the same row per transaction
#                                           (seq, position, id, type, by, at, key, the line as bytea)
#   replay                                  AnnouncementsBench pg-replay: the same log from the file
#                                           and from a table, alternating
#
# Environment (optional): BENCH_DIR (default .bench), PG_LOG_BENCH_SECONDS (per run, default 3),
# PG_LOG_BENCH_EVENTS (events of the replayed log, default 100000: BENCH_DIR/log-v3-N.jsonl, generated
# when missing).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
source scripts/pg.sh

BENCH_BIN=.build/release/AnnouncementsBench
BENCH_DIR=${BENCH_DIR:-.bench}
SECONDS_EACH=${PG_LOG_BENCH_SECONDS:-3}
EVENTS=${PG_LOG_BENCH_EVENTS:-100000}
[ -x "$BENCH_BIN" ] || { echo "$BENCH_BIN is missing: run 'make release' first"; exit 1; }

DIR=
stop_all() { pg_stop; [ -z "$DIR" ] || rm -rf "$DIR"; }
trap stop_all EXIT
trap 'exit 130' INT TERM
pg_start "$BENCH_DIR" pgbench psql || { echo "PostgreSQL log figures skipped: $PG_SKIP"; exit 0; }
DIR=$(mktemp -d "$(cd "$BENCH_DIR" && pwd)/pg-log-XXXXXX")
URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
echo "PostgreSQL $("$PG_BIN/postgres" --version | sed 's/^postgres (PostgreSQL) //') on 127.0.0.1:$PG_PORT, fsync=on, synchronous_commit=on"

# pgbench's rows: the store's table, and one line of the bench's body (1.1 KB) per INSERT.
"$PG_BIN/psql" -q -X -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres > /dev/null <<'SQL'
CREATE SEQUENCE pgbench_seq;
CREATE TABLE pgbench_events (
  seq bigint PRIMARY KEY, position bigint NOT NULL UNIQUE, id bigint NOT NULL, type text NOT NULL,
  by text NOT NULL, at timestamptz NOT NULL, key text, line bytea NOT NULL
);
SQL
line=$(sed "s/'/''/g" scripts/bench-post.json | tr -d '\n')
cat > "$DIR/insert.sql" <<SQL
INSERT INTO pgbench_events (seq, position, id, type, by, at, key, line)
SELECT n, n * 1200, n, 'created', 'bench', now(), NULL, convert_to('{"seq":' || n || ',"type":"created","data":$line}', 'UTF8')
FROM (SELECT nextval('pgbench_seq') AS n) AS next;
SQL
pgbench_rate() {
  local connections=$1 threads=$(( $1 < 2 ? $1 : 2 ))
  "$PG_BIN/pgbench" -n -M prepared -f "$DIR/insert.sql" -c "$connections" -j "$threads" -T "$SECONDS_EACH" \
      -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres 2> "$DIR/pgbench.err" \
    | awk '/^tps = / { print $3; found = 1 } END { exit !found }' \
    || { echo "pgbench failed: $(tail -n 3 "$DIR/pgbench.err")" >&2; return 1; }
}
store_rates() { # [--postgres URL]: "1 16 64" rates of the store's append benchmark
  "$BENCH_BIN" append --dir "$DIR/append" --writers 1 16 64 --seconds "$SECONDS_EACH" --followers 0 "$@" \
    | awk '/ writers:/ { printf "%s ", $3 }'
}

declare -A SUMS
add() { local i=0; for value in $2; do SUMS[$1,$i]=$(awk -v a="${SUMS[$1,$i]:-0}" -v b="$value" 'BEGIN { print a + b }'); i=$((i + 1)); done; }
for round in 1 2; do
  for kind in $([ $round = 1 ] && echo "file postgres shared pgbench" || echo "pgbench shared postgres file"); do
    case $kind in
      file) rates=$(store_rates) ;;
      postgres) rates=$(store_rates --postgres "$URL") ;;
      shared) rates=$(store_rates --postgres "$URL" --shared) ;;
      pgbench) rates="$(pgbench_rate 1) $(pgbench_rate 16) $(pgbench_rate 64)" ;;
    esac
    printf "  %-32s %s\n" "$kind (1, 16, 64 writers):" "$rates"
    add "$kind" "$rates"
  done
done
echo "Durable appends per second, means of 2 alternating runs (${SECONDS_EACH}s each):"
printf "  %-10s %12s %12s %12s %18s %18s\n" writers "file log" "PostgreSQL log" "pgbench" "PostgreSQL / file" "PostgreSQL / pgbench"
i=0
for writers in 1 16 64; do
  awk -v w="$writers" -v f="${SUMS[file,$i]}" -v p="${SUMS[postgres,$i]}" -v b="${SUMS[pgbench,$i]}" \
    'BEGIN { printf "  %-10s %12.0f %12.0f %12.0f %18.2f %18.2f\n", w, f / 2, p / 2, b / 2, p / f, p / b }'
  i=$((i + 1))
done
echo "The PostgreSQL log shared (as serve opens it: each commit notifies, the log is followed) beside alone:"
i=0
for writers in 1 16 64; do
  awk -v w="$writers" -v p="${SUMS[postgres,$i]}" -v s="${SUMS[shared,$i]}" \
    'BEGIN { printf "  %-10s alone %8.0f  shared %8.0f  shared / alone %.2f\n", w, p / 2, s / 2, s / p }'
  i=$((i + 1))
done

LOG=$BENCH_DIR/log-v3-$EVENTS.jsonl
[ -f "$LOG" ] || "$BENCH_BIN" generate --events "$EVENTS" --out "$LOG"
"$BENCH_BIN" pg-replay "$LOG" --postgres "$URL" --runs 3
