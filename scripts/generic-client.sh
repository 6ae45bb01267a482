#!/usr/bin/env bash
# A generic client nobody here wrote against a live server on the default config.yaml (its seed,
# an editor's token, a fresh log in a temporary folder, a free port): scripts/generic_client.py,
# with httpx and httpx-sse from PyPI (installed when missing into .build/python-tools, see
# scripts/python-tools.sh). `make test` runs it with the debug build; then the log it wrote must
# verify.
#
# Usage: scripts/generic-client.sh [path/to/announcements]   (default: the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-tools.sh
source scripts/temp-server.sh
BIN=${1:-.build/debug/announcements}

python_tools httpx httpx-sse || { unavailable "generic client" "$PYTHON_TOOLS_SKIP"; exit; }
PYTHON=$PYTHON_TOOLS/bin/python

export ANNOUNCEMENTS_TOKEN=generic-client-token
server_start "$BIN" --config config.yaml --log "$SERVER_DIR/log.jsonl"
echo "generic client (httpx $($PYTHON -c 'import httpx; print(httpx.__version__)')) against $SERVER_URL:"
status=0
TOKEN=$ANNOUNCEMENTS_TOKEN $PYTHON scripts/generic_client.py "$SERVER_URL" || status=$?
server_stop
"$BIN" verify --log "$SERVER_DIR/log.jsonl" > "$SERVER_DIR/verify" || { cat "$SERVER_DIR/verify"; status=1; }
exit $status
