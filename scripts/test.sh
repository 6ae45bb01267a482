#!/usr/bin/env bash
# `make test`: `swift test` with a throwaway PostgreSQL for the tests that need one, then clients
# and tools nobody here wrote against a live server (scripts/generic-client.sh,
# scripts/third-party-tools.sh; their Python packages go into .build/python-tools), the web client
# in a real browser (scripts/browser-test.sh), and the documents' examples as written
# (scripts/tour.sh for README.md's tour, scripts/doc-examples.sh for docs/). The cluster
# (scripts/pg.sh: Debian's PostgreSQL, installed when missing as root, on 127.0.0.1 on a free port,
# trusting user postgres) lives in a temporary folder under $TMPDIR (default /tmp) and is stopped
# and deleted on every exit, Ctrl-C included. The tests find it in ANNOUNCEMENTS_TEST_POSTGRES_URL;
# when it cannot start, the reason is printed and the tests run without it (they say what they skip).
#
# Usage: scripts/test.sh [swift test arguments…], e.g. scripts/test.sh --filter Postgres
# Environment (all optional):
#   SWIFT                            the swift binary (default swift; the Makefile passes its own)
#   ANNOUNCEMENTS_TEST_POSTGRES_URL  a PostgreSQL of your own: used as is, nothing is started
#   TMPDIR                           where the cluster's folder goes (default /tmp); as root, every
#                                    folder above it must let the postgres user through (o+x)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh

if [ -n "${ANNOUNCEMENTS_TEST_POSTGRES_URL:-}" ]; then
  # (Without the URL's password, if it has one.)
  echo "PostgreSQL for the tests: $(sed -E 's|^([a-z]+://[^:@/]*):[^@/]*@|\1:***@|' <<< "$ANNOUNCEMENTS_TEST_POSTGRES_URL") (from the environment)"
else
  trap pg_stop EXIT
  trap 'exit 130' INT TERM  # so that the EXIT trap stops the cluster on Ctrl-C too
  if pg_start "${TMPDIR:-/tmp}"; then
    export ANNOUNCEMENTS_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
    # `postgres --version` prints "postgres (PostgreSQL) 15.10 (Debian …)".
    echo "PostgreSQL for the tests: $("$PG_BIN/postgres" --version | sed 's/^postgres (PostgreSQL) //') on 127.0.0.1:$PG_PORT"
  else
    echo "PostgreSQL tests will be skipped: $PG_SKIP"
    pg_stop  # what a failed start left behind: a half-made folder
  fi
fi

status=0
# The systemd unit (deploy/announcements.service) through systemd-analyze verify, where it is installed.
scripts/deploy-check.sh || status=$?
"${SWIFT:-swift}" test "$@" || status=$?
# Clients and tools nobody here wrote against a live server, on a whole run only: a generic client
# (Python's httpx and httpx-sse), a client generated from the OpenAPI document, the event stream
# through nginx, /metrics through promtool; the web client in a real browser; and README.md's
# tour, run as written (scripts/tour.sh reads its commands from README.md and checks their output).
if [ $# -eq 0 ]; then
  scripts/generic-client.sh || status=$?
  scripts/third-party-tools.sh || status=$?
  scripts/browser-test.sh || status=$?
  scripts/tour.sh .build/debug/announcements || status=$?
  scripts/doc-examples.sh .build/debug/announcements || status=$?
else
  echo "generic client, third-party tools, browser tests, README's tour and the documents' examples (scripts/generic-client.sh, scripts/third-party-tools.sh, scripts/browser-test.sh, scripts/tour.sh, scripts/doc-examples.sh) not run: a run with arguments ($*) runs part of the tests"
fi
exit "$status"
