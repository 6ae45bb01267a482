# Sourced by the benchmark scripts that start servers of their own (scripts/http-bench.sh,
# scripts/handovers-bench.sh, scripts/ab-bench.sh, scripts/cores-bench.sh):
#   bench_config FILE   writes the shipped config.yaml to FILE for a bench server: port 0, the log
#                       log.jsonl beside it, the writer token bench-token (scripts/bench-post.lua
#                       sends it). Fails, saying so, when config.yaml has no token line to replace
#                       (every POST would then be a 401, measured as if it were a write).
#   listening OUT PID   waits (10 s at most) for the `listening on URL` line in the file OUT, which
#                       the server PID writes its stdout to; prints the URL. Returns 1, with the
#                       server's stderr (OUT with `.err` for `.out`), when it exits or says nothing.
listening() {
  local url=
  for _ in $(seq 100); do
    url=$(sed -n 's/^listening on //p' "$1")
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start:" >&2; cat "${1%.out}.err" >&2; return 1
}

bench_config() {
  sed -e 's|^port: .*|port: 0|' -e 's|^log: .*|log: log.jsonl|' -e 's|editor: env:ANNOUNCEMENTS_TOKEN|bench: bench-token|' config.yaml > "$1"
  grep -q 'bench: bench-token' "$1" || {
    echo "config.yaml has no 'editor: env:ANNOUNCEMENTS_TOKEN' line for the bench token to replace; update scripts/bench-lib.sh"
    return 1
  }
}
