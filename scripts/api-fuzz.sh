#!/usr/bin/env bash
# `make fuzz`: schemathesis (PyPI) against a live release server with the repository's OpenAPI
# document (served by the server at /openapi.yaml): no 5xx, every response as
# documented. Then the log the fuzzer wrote must still verify.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v schemathesis >/dev/null; then
  echo "installing schemathesis (pip)…"
  python3 -m pip install --quiet schemathesis || true
  command -v schemathesis >/dev/null || {
    echo "schemathesis is missing and pip could not install it on the PATH: run 'pipx install schemathesis'"
    echo "(or 'pip install schemathesis' in a virtualenv, or add ~/.local/bin to PATH), then 'make fuzz' again"
    exit 1
  }
fi

BIN=.build/release/announcements
DIR=$(mktemp -d "${TMPDIR:-/tmp}/announcements-fuzz-XXXXXX")
SERVER=  # set before the trap: under `set -u` an unset one would stop the trap before its `rm`
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; fi; rm -rf "$DIR"' EXIT

cat > "$DIR/config.yaml" <<'YAML'
port: 0
log: log.jsonl
tokens:
  fuzz: {token: fuzz-token, role: admin}
seed:
  - title: Welcome
    body: "<p>Hello</p>"
  - title: Lunch
YAML
LOG_LEVEL=warning "$BIN" serve --config "$DIR/config.yaml" > "$DIR/out" 2> "$DIR/err" &
SERVER=$!
for _ in $(seq 50); do grep -q listening "$DIR/out" && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$DIR/out")
[ -n "$URL" ] || { cat "$DIR/err"; exit 1; }

status=0
schemathesis --config-file schemathesis.toml run "$URL/openapi.yaml" \
  --url "$URL" -H "Authorization: Bearer fuzz-token" \
  --max-examples "${FUZZ_EXAMPLES:-50}" --workers 2 --seed "${FUZZ_SEED:-20261122}" --no-color || status=$?

if ! kill -0 "$SERVER" 2>/dev/null; then
  echo "the server died during the fuzz run:"; tail -40 "$DIR/err"; exit 1
fi
kill "$SERVER"; wait "$SERVER" || { echo "the server did not stop cleanly"; exit 1; }
"$BIN" verify --log "$DIR/log.jsonl" || status=1
exit $status
