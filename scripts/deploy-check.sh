#!/usr/bin/env bash
# The deployment files and the deployed binary: deploy/announcements.service must pass
# `systemd-analyze verify` with no warning about it, and a binary given as argument must hold the
# Swift runtime itself (no libswift*, Foundation, Dispatch or BlocksRuntime in `ldd`) and run from
# an empty folder. Exits non-zero on the first failure, saying what failed.
#
# Usage: scripts/deploy-check.sh [BINARY]     e.g. scripts/deploy-check.sh .build/release/announcements
#   BINARY  a static release build (`make release` or `make install`); without it only the unit is
#           checked. The unit check is skipped, and said so, where systemd-analyze is missing.
#
# The unit's ExecStart names /usr/local/bin/announcements, which `systemd-analyze verify` requires to
# exist. The check runs on a copy of the unit whose ExecStart names instead the first of: BINARY,
# /usr/local/bin/announcements, .build/release/announcements, .build/debug/announcements; with none
# of them, a stand-in script (the line says which, so a stand-in never passes for the real thing).
set -euo pipefail
cd "$(dirname "$0")/.."

UNIT=${DEPLOY_CHECK_UNIT:-deploy/announcements.service}  # another unit file: for testing this script
BIN=${1:-}
if [ -n "$BIN" ] && [ ! -x "$BIN" ]; then
  echo "deploy-check: $BIN is not an executable file"
  exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/announcements-deploy-XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# The Dockerfile copies every folder the manifest names (a target's custom path), or its build
# fails as the manifest loads (nothing here runs Docker: the check reads both files).
copied=$(sed -n 's/^COPY \([^ ]*\) .*/\1/p' deploy/Dockerfile)
for path in $(sed -n 's/.*path: "\([^"]*\)".*/\1/p' Package.swift); do
  found=
  for source in $copied; do
    case "$path/" in "$source"/*) found=1 ;; esac
  done
  if [ -z "$found" ]; then
    echo "deploy-check: deploy/Dockerfile does not copy $path, which Package.swift names: its build would fail"
    exit 1
  fi
done
echo "ok: deploy/Dockerfile copies every folder Package.swift names"

# The unit, through systemd-analyze verify.
if ! command -v systemd-analyze >/dev/null; then
  echo "skipped: systemd-analyze is not installed (Debian package systemd)"
else
  exec_path=
  for candidate in "$BIN" /usr/local/bin/announcements .build/release/announcements .build/debug/announcements; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then exec_path=$(realpath "$candidate"); break; fi
  done
  if [ -z "$exec_path" ]; then
    exec_path="$TMP/stand-in/announcements"
    mkdir -p "$TMP/stand-in"
    printf '#!/bin/sh\nexit 0\n' > "$exec_path"
    chmod +x "$exec_path"
    echo "deploy-check: no announcements binary: ExecStart checked against a stand-in script"
  fi
  grep -q '^ExecStart=/usr/local/bin/announcements ' "$UNIT" || {
    echo "deploy-check: $UNIT: ExecStart no longer starts with /usr/local/bin/announcements: update this script"
    exit 1
  }
  # Same file name (the unit's name is its file's), only ExecStart's program changed.
  mkdir -p "$TMP/unit"
  sed "s|^ExecStart=/usr/local/bin/announcements |ExecStart=$exec_path |" "$UNIT" > "$TMP/unit/announcements.service"
  status=0
  # --man=no: Documentation= names a file, not a man page, and man may not be installed.
  out=$(systemd-analyze verify --man=no "$TMP/unit/announcements.service" 2>&1) || status=$?
  # It exits 0 on most warnings ("Unknown key", "Failed to parse … ignoring"): any line about this
  # unit fails the check. Lines about other units (the system's own) are shown, not counted.
  ours=$(grep -F 'announcements.service' <<< "$out" || true)
  out=${out//"$TMP/unit/announcements.service"/$UNIT}  # same line numbers: only ExecStart changed
  [ -n "$out" ] && echo "$out"
  if [ "$status" -ne 0 ] || [ -n "$ours" ]; then
    echo "deploy-check: FAILED: systemd-analyze verify $UNIT (exit $status)"
    exit 1
  fi
  echo "deploy-check: $UNIT passes systemd-analyze verify (ExecStart checked as $exec_path)"
fi

[ -n "$BIN" ] || exit 0

# The binary: no Swift library loaded from the system.
if ! libs=$(ldd "$BIN" 2>&1); then
  echo "$libs"
  echo "deploy-check: FAILED: ldd $BIN"
  exit 1
fi
swift_libs=$(grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime' <<< "$libs" || true)
missing=$(grep -F 'not found' <<< "$libs" || true)
if [ -n "$swift_libs" ] || [ -n "$missing" ]; then
  echo "$libs"
  echo "deploy-check: FAILED: $BIN loads Swift's runtime from the system, or misses a library (build it with --static-swift-stdlib):"
  echo "$swift_libs$missing"
  exit 1
fi
# The libraries it names itself (ldd adds theirs): readelf is in binutils, beside any Swift toolchain.
direct=$(readelf -d "$BIN" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ' || true)
direct=${direct% }
echo "deploy-check: $BIN links no Swift library dynamically (it needs: ${direct:-see ldd $BIN})"

# ...and runs alone in an empty folder, with no environment but PATH (no LD_LIBRARY_PATH).
mkdir -p "$TMP/run"
cp "$BIN" "$TMP/run/announcements"
run() { (cd "$TMP/run" && env -i PATH=/usr/bin:/bin ./announcements "$@"); }
run --help > "$TMP/help.out" 2>&1 || { cat "$TMP/help.out"; echo "deploy-check: FAILED: announcements --help from an empty folder"; exit 1; }
run init --log ./log/announcements.jsonl > "$TMP/init.out" 2>&1 || { cat "$TMP/init.out"; echo "deploy-check: FAILED: announcements init from an empty folder"; exit 1; }
run verify --log ./log/announcements.jsonl > "$TMP/verify.out" 2>&1 || { cat "$TMP/verify.out"; echo "deploy-check: FAILED: announcements verify of the log init wrote"; exit 1; }
echo "deploy-check: $BIN runs from an empty folder (--help, init, verify)"
