#!/usr/bin/env bash
# Bytes on the wire for a v1 page of 100 announcements (and a v2 page, and one announcement),
# plain, gzip and deflate, from a release server over a synthetic log (the bench generator's
# bodies: HTML of 300 to 1,800 bytes); then what compressing the v1 page once costs, at zlib
# levels 1, 6 (the server's) and 9, timed with Python's zlib binding to the same libz.
# Needs a release build (`make release`); takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=.build/release
DIR=$(mktemp -d "${TMPDIR:-/tmp}/announcements-wire-XXXXXX")
EVENTS=${WIRE_EVENTS:-2000}
SERVER=  # set before the trap: under `set -u` an unset one would stop the trap before its `rm`
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; fi; rm -rf "$DIR"' EXIT

"$BIN/AnnouncementsBench" generate --events "$EVENTS" --out "$DIR/log.jsonl" > /dev/null
printf 'host: 127.0.0.1\nport: 0\nlog: log.jsonl\n' > "$DIR/config.yaml"
LOG_LEVEL=warning "$BIN/announcements" serve --config "$DIR/config.yaml" > "$DIR/out" 2> "$DIR/err" &
SERVER=$!
for _ in $(seq 100); do grep -q listening "$DIR/out" && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$DIR/out")
[ -n "$URL" ] || { cat "$DIR/err"; exit 1; }

# wire NAME PATH VERSION: body and header bytes as received (curl decodes nothing without --compressed).
wire() {
  local name=$1 path=$2 version=$3 plain=
  for coding in identity gzip deflate; do
    local headers=(-H "Accept-Version: $version")
    [ "$coding" = identity ] || headers+=(-H "Accept-Encoding: $coding")
    read -r body head < <(curl -s -o "$DIR/body-$coding" -w '%{size_download} %{size_header}\n' "${headers[@]}" "$URL$path")
    [ -n "$plain" ] || plain=$body
    awk -v name="$name" -v coding="$coding" -v body="$body" -v head="$head" -v plain="$plain" \
      'BEGIN { printf "%-34s %-9s %9d %8d %9d %7.1f%%\n", name, coding, body, head, body + head, 100 * body / plain }'
  done
}

printf "%-34s %-9s %9s %8s %9s %8s\n" "response ($EVENTS events in the log)" coding body headers total "of plain"
wire "GET /announcements?max=100 (v1)" "/announcements?max=100" 1.0
cp "$DIR/body-identity" "$DIR/v1-page"
wire "GET /announcements?max=100 (v2)" "/announcements?max=100" 2.0
ID=$(sed -n 's/^\[{"id":\([0-9]*\).*/\1/p' "$DIR/v1-page")
wire "GET /announcements/$ID" "/announcements/$ID" 1.0

# The server sends what zlib makes: check that the gzip body is the plain one, compressed.
curl -s --compressed -H 'Accept-Version: 1.0' "$URL/announcements?max=100" | cmp -s - "$DIR/v1-page" || { echo "the gzip page does not decompress to the plain one"; exit 1; }

python3 - "$DIR/v1-page" <<'PY'
import sys, time, zlib
data = open(sys.argv[1], "rb").read()
print(f"\ncompressing the v1 page once ({len(data)} bytes), gzip, median of 200:")
for level in (1, 6, 9):
    times = []
    for _ in range(200):
        start = time.perf_counter()
        compressor = zlib.compressobj(level, zlib.DEFLATED, 31)
        out = compressor.compress(data) + compressor.flush()
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"  level {level}: {len(out):6d} bytes ({100 * len(out) / len(data):4.1f}%), {times[len(times) // 2] * 1e6:7.0f} µs")
PY
