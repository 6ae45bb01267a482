#!/usr/bin/env bash
# The web client in a real browser (scripts/browser_test.py): Debian's chromium and chromium-driver
# (installed when missing, as root, with apt) through Selenium, with axe-core from
# axe-selenium-python (both from PyPI, into .build/python-tools: scripts/python-tools.sh). Without
# them the check is skipped with the reason, or fails under CI. `make test` runs it with the debug
# build.
#
# Usage: scripts/browser-test.sh [path/to/announcements] [--screenshots DIR | --measure]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-tools.sh
BIN=${1:-.build/debug/announcements}
shift || true

if ! command -v chromedriver >/dev/null || ! [ -x "${CHROMIUM:-/usr/lib/chromium/chromium}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing chromium and chromium-driver (apt)…"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; } >/dev/null 2>&1 || true
  fi
  if ! command -v chromedriver >/dev/null || ! [ -x "${CHROMIUM:-/usr/lib/chromium/chromium}" ]; then
    unavailable "browser tests" "no chromium and chromium-driver (Debian: apt-get install chromium chromium-driver)"
    exit
  fi
fi
python_tools selenium axe-selenium-python || { unavailable "browser tests" "$PYTHON_TOOLS_SKIP"; exit; }
CHROMEDRIVER=$(command -v chromedriver) "$PYTHON_TOOLS/bin/python" scripts/browser_test.py "$BIN" "$@"
