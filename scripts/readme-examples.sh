#!/usr/bin/env bash
# Runs the examples of docs/*.md and events/README.md that show log lines, on fresh logs with this
# build, and prints what they print: after a change to the log format, paste each block over its
# example (times, salts and hashes differ from run to run; the shape is what this checks). The
# lines of README.md's tour are made by scripts/tour.sh --show.
# `make test` checks that every log line README.md, docs/*.md and events/README.md show reads as
# an event of the documented format (ReadmeLogLineTests); this is how they are made.
#
# Usage: scripts/readme-examples.sh [path/to/announcements]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
# Its servers start and stop as the checked examples' do.
source scripts/examples-lib.sh
bin=$(realpath "${1:-.build/debug/announcements}")
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT

# A config with the examples' tokens and `$1` seed announcements (the default config's first
# ones): the throwaway server of docs/http-api.md, "Examples and the state they assume".
config() {
    local dir=$1 seeds=$2
    mkdir -p "$dir/events"
    {
        echo "host: 127.0.0.1"
        echo "port: 0"
        echo "log: events/announcements.jsonl"
        echo "snapshot: {enabled: false}"
        echo "tokens:"
        echo "  editor: s3cret"
        echo "  alice: alice-token"
        echo "  ann: {token: ann-token, role: author}"
        echo "  audit: {token: audit-token, role: auditor}"
        echo "  root: {token: root-token, role: admin}"
        echo "seed:"
        [ "$seeds" -ge 1 ] && echo '  - {title: "Grails Quickcast #1: Grails Interceptors", body: "<p>Interceptors replace filters.</p>"}'
        [ "$seeds" -ge 2 ] && echo '  - {title: "Grails Quickcast #2: JSON Views", body: "<p>Templates that render JSON.</p>"}'
        true
    } > "$dir/config.yaml"
}

# Starts a server on `$1`'s config and sets `url`.
start() {
    local dir=$1
    examples_serve "$dir" "$dir" "$bin" serve --config "$dir/config.yaml" --log-level warning
    pid=$examples_pid
    if [ -z "$examples_port" ]; then
        echo "the server did not start:" >&2
        cat "$dir/serve.out" "$dir/serve.err" >&2
        exit 1
    fi
    url=http://127.0.0.1:$examples_port
}

stop() {
    examples_stop "$pid" || true
    pid=
}

write() {  # write TOKEN METHOD PATH [JSON] [extra curl arguments…]
    local token=$1 method=$2 path=$3 body=${4:-}
    shift 4 || shift $#
    curl -sf -o /dev/null -X "$method" "$url$path" -H "Authorization: Bearer $token" \
        -H 'Content-Type: application/json' ${body:+-d "$body"} "$@"
}

block() {
    echo
    echo "== $1"
}

# docs/operations.md, "The log": an edit of the second seed.
dir=$work/log; config "$dir" 2; start "$dir"
write alice-token PATCH /announcements/2 '{"title":"Grails Quickcast #2: JSON and Markup Views"}'
block "docs/operations.md, The log (tail -1)"
tail -1 "$dir/events/announcements.jsonl"
stop

# docs/http-api.md, "Roles" and "Audit": ann's announcement, its history and the feed in both forms.
dir=$work/roles; config "$dir" 2; start "$dir"
write ann-token POST /announcements '{"title":"Bake sale","body":"<p>Friday, room 4</p>"}'
write ann-token PATCH /announcements/3 '{"title":"Bake sale moved to Monday"}'
block "docs/http-api.md, The public feed: events?after=2 (public, then with the auditor's token)"
curl -s "$url/events?after=2" | jq -c '.[]'
curl -s "$url/events?after=2" -H 'Authorization: Bearer audit-token' | jq -c '.[]'
# docs/http-api.md, "Erasure": the same announcement erased by an admin.
write s3cret POST /announcements '{"title":"Canteen menu"}'
block "docs/http-api.md, Erasure: POST /announcements/3/erase, then its history"
curl -s -X POST "$url/announcements/3/erase" -H 'Authorization: Bearer root-token' \
    -H 'Content-Type: application/json' -d '{"reason":"personal data posted by mistake"}'
echo
curl -s "$url/announcements/3/history" -H 'Authorization: Bearer audit-token' | jq -c '.[]'
stop

# docs/http-api.md, "Audit": announcement 7's history (six events before it).
dir=$work/audit; config "$dir" 2; start "$dir"
for n in 3 4 5 6; do write s3cret POST /announcements "{\"title\":\"Announcement $n\"}"; done
write s3cret POST /announcements '{"title":"Fire drill","body":"<p>Thursday 10:00</p>"}'
write s3cret PATCH /announcements/7 '{"title":"Fire drill moved to Friday"}'
write s3cret DELETE /announcements/7 ''
block "docs/http-api.md, Audit: /announcements/7/history"
curl -s "$url/announcements/7/history" -H 'Authorization: Bearer audit-token' | jq -c '.[]'
block "docs/http-api.md, Audit: the list as it was"
echo "\$ curl -si 'localhost:8080/v2/announcements?asOf=8&max=2&offset=5' -H \"\$AUDIT\""
curl -si "$url/v2/announcements?asOf=8&max=2&offset=5" -H 'Authorization: Bearer audit-token' | tr -d '\r' | grep -vi '^date:\|^x-request-id:\|^server:'
echo
echo "\$ curl -s 'localhost:8080/v2/announcements?max=2&offset=5'"
curl -s "$url/v2/announcements?max=2&offset=5"
echo
stop

# docs/http-api.md, "Following the log live": a stream after seq 4, and an event that arrives while
# it is open.
dir=$work/stream; config "$dir" 2; start "$dir"
for n in 3 4 5 6; do write s3cret POST /announcements "{\"title\":\"Announcement $n\"}"; done
curl -sN "$url/events?after=4" -H 'Accept: text/event-stream' -H 'Authorization: Bearer audit-token' > "$dir/stream.out" &
follower=$!
# Until the stream has sent what it had (event 6), then until the live one (event 7) arrives.
waitfor() { for _ in $(seq 200); do grep -q "^id: $1\$" "$dir/stream.out" && return; sleep 0.05; done; echo "the stream did not send event $1" >&2; exit 1; }
waitfor 6
write s3cret POST /announcements '{"title":"Live"}'
waitfor 7
sleep 0.1  # its data line and the blank line after it
kill "$follower"
block "docs/http-api.md, Following the log live"
echo "\$ curl -sN localhost:8080/events?after=4 -H 'Accept: text/event-stream' -H \"\$AUDIT\""
cat "$dir/stream.out"
stop

# docs/http-api.md, "Retries are safe with Idempotency-Key": a keyed create (six events before it).
dir=$work/keys; config "$dir" 2; start "$dir"
for n in 3 4 5 6; do write s3cret POST /announcements "{\"title\":\"Announcement $n\"}"; done
write s3cret POST /announcements '{"title":"Fire drill on Thursday"}' -H 'Idempotency-Key: 5d0c6a1e-fire-drill'
block "docs/http-api.md, Idempotency-Key (tail -1)"
tail -1 "$dir/events/announcements.jsonl"
stop

# events/README.md, "Format": a seed, a second one erased, and the erasure.
dir=$work/format; config "$dir" 2
sed -i 's/"<p>Templates that render JSON.<\/p>"/null/' "$dir/config.yaml"
"$bin" init --config "$dir/config.yaml" --log-level warning > /dev/null
(cd "$dir" && "$bin" erase 2 --reason "posted to the wrong audience" --by root --log-level warning > /dev/null)
block "events/README.md, Format (the whole log)"
cat "$dir/events/announcements.jsonl"

# docs/cli.md, "announcements upgrade": a log of the first format (no "v", no salt), upgraded.
dir=$work/upgrade; config "$dir" 0
prev=
for line in '{"seq":1,"type":"created","id":1,"at":"2026-11-21T09:30:00.000Z","by":"seed","data":{"title":"Welcome","body":"<p>Hello</p>"}' \
            '{"seq":2,"type":"edited","id":1,"at":"2026-11-21T09:31:00.000Z","by":"alice","data":{"title":"Welcome aboard"}' \
            '{"seq":3,"type":"created","id":2,"at":"2026-11-21T09:32:00.000Z","by":"alice","data":{"title":"Lunch"}'; do
    # Format 1: linked by the SHA-256 of the previous line's bytes.
    line="$line${prev:+,\"prev\":\"$prev\"}}"
    echo "$line" >> "$dir/events/announcements.jsonl"
    prev=$(printf '%s' "$line" | sha256sum | cut -d' ' -f1)
done
block "docs/cli.md, announcements upgrade"
(
    cd "$dir"
    echo '$ announcements erase 1 --reason "wrong audience" --by root'
    "$bin" erase 1 --reason "wrong audience" --by root 2>&1 || true
    echo '$ announcements upgrade'
    "$bin" upgrade
    echo '$ announcements upgrade'
    "$bin" upgrade
)
