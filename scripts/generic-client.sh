#!/usr/bin/env bash
# A generic client nobody here wrote against a live server on the default config.yaml (its seed,
# an editor's token, a fresh log in a temporary folder, a free port): scripts/generic_client.py,
# with httpx and httpx-sse from PyPI (installed when missing). `make test` runs it with the debug
# build; then the log it wrote must verify.
#
# Usage: scripts/generic-client.sh [path/to/announcements]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/debug/announcements}

# httpx and httpx-sse: already importable, or installed with pip; where pip may not install into
# the system's Python (PEP 668), into a virtual environment kept in .build/.
PYTHON=python3
if ! $PYTHON -c 'import httpx, httpx_sse' 2>/dev/null; then
  echo "installing httpx and httpx-sse (pip)…"
  $PYTHON -m pip install --quiet httpx httpx-sse >/dev/null 2>&1 || true
  if ! $PYTHON -c 'import httpx, httpx_sse' 2>/dev/null; then
    VENV=.build/generic-client-venv
    { [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"; } >/dev/null 2>&1 && PYTHON=$VENV/bin/python
    $PYTHON -m pip install --quiet httpx httpx-sse >/dev/null 2>&1 || true
    $PYTHON -c 'import httpx, httpx_sse' 2>/dev/null || {
      # CI (.ci/run sets CI) must run it: a green run without its checks would say nothing.
      if [ -n "${CI:-}" ]; then
        echo "generic client: httpx and httpx-sse cannot be installed (pip and python3-venv failed), and CI must run it"
        exit 1
      fi
      # Elsewhere, as the PostgreSQL tests do without PostgreSQL: said, and skipped.
      echo "generic client skipped: httpx and httpx-sse are missing, and neither pip nor a virtual environment"
      echo "(python3-venv) could install them (offline?): run 'pip install httpx httpx-sse', then 'make test' again"
      exit 0
    }
  fi
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/announcements-client-XXXXXX")
SERVER=
trap 'if [ -n "$SERVER" ]; then kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; fi; rm -rf "$DIR"' EXIT

export ANNOUNCEMENTS_TOKEN=generic-client-token
LOG_LEVEL=warning "$BIN" serve --config config.yaml --log "$DIR/log.jsonl" --port 0 > "$DIR/out" 2> "$DIR/err" &
SERVER=$!
# Up to 60 s: a debug build on a busy machine starts slowly; a server that died is not waited for.
for _ in $(seq 600); do grep -q listening "$DIR/out" && break; kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$DIR/out")
[ -n "$URL" ] || { echo "the server did not start:"; cat "$DIR/err"; exit 1; }

echo "generic client (httpx $($PYTHON -c 'import httpx; print(httpx.__version__)')) against $URL:"
status=0
TOKEN=$ANNOUNCEMENTS_TOKEN $PYTHON scripts/generic_client.py "$URL" || status=$?
kill "$SERVER"; wait "$SERVER" || { echo "the server did not stop cleanly"; tail -20 "$DIR/err"; exit 1; }
SERVER=
"$BIN" verify --log "$DIR/log.jsonl" > "$DIR/verify" || { cat "$DIR/verify"; status=1; }
exit $status
