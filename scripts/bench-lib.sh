# Sourced by the benchmark scripts that start servers of their own (scripts/http-bench.sh,
# scripts/handovers-bench.sh):
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
